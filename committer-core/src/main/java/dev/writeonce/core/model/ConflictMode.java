package dev.writeonce.core.model;

import java.util.Locale;

/** What a job does about data already under its destination. */
public enum ConflictMode {
  /** Refuse to start when the destination already holds data. */
  FAIL,
  /** Keep existing objects; objects of the job replace same-named ones. */
  APPEND,
  /** Delete existing objects under the replaced prefixes, after the commit point only. */
  REPLACE;

  /** Parses a mode name case-insensitively; the error lists the valid names. */
  public static ConflictMode parse(String name) {
    try {
      return valueOf(name.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "unknown conflict mode '" + name + "': use fail, append or replace", e);
    }
  }

  /** The lower-case name used in configuration and manifests. */
  public String id() {
    return name().toLowerCase(Locale.ROOT);
  }
}
