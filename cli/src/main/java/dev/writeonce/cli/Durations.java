package dev.writeonce.cli;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;

/** Durations as operators write them: 90s, 30m, 12h, 7d. */
final class Durations implements ITypeConverter<Duration> {

  private static final Pattern FORM = Pattern.compile("(\\d+)\\s*([smhd])");

  @Override
  public Duration convert(String value) {
    Matcher m = FORM.matcher(value.trim());
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "'" + value + "' is not a duration: use a number and s, m, h or d (for example 12h)");
    }
    long n = Long.parseLong(m.group(1));
    return switch (m.group(2)) {
      case "s" -> Duration.ofSeconds(n);
      case "m" -> Duration.ofMinutes(n);
      case "h" -> Duration.ofHours(n);
      default -> Duration.ofDays(n);
    };
  }

  static String format(Duration d) {
    long s = d.toSeconds();
    if (s >= 86_400 && s % 86_400 == 0) {
      return s / 86_400 + "d";
    }
    if (s >= 3_600 && s % 3_600 == 0) {
      return s / 3_600 + "h";
    }
    if (s >= 60 && s % 60 == 0) {
      return s / 60 + "m";
    }
    return s + "s";
  }
}
