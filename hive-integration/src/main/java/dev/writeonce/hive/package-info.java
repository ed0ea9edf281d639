/**
 * Hive configuration and the shim wiring for Hive's staging directories. Not written yet: the
 * module builds empty.
 */
package dev.writeonce.hive;
