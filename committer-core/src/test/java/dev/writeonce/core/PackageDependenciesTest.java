package dev.writeonce.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * committer-core's packages form layers: no package uses one that uses it back, directly or through
 * others. Read from the sources: imports and fully qualified names alike.
 */
class PackageDependenciesTest {

  private static final Path SOURCES = Path.of("src/main/java/dev/writeonce/core");
  private static final Pattern USE = Pattern.compile("dev\\.writeonce\\.core\\.([a-z]+)\\.[A-Z]");

  @Test
  void noPackageOfCoreUsesOneThatUsesItBack() throws IOException {
    Map<String, Set<String>> uses = new TreeMap<>();
    try (Stream<Path> files = Files.walk(SOURCES)) {
      for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
        String from = SOURCES.relativize(file).getName(0).toString();
        if (from.endsWith(".java")) {
          continue;
        }
        Matcher matcher = USE.matcher(Files.readString(file));
        while (matcher.find()) {
          if (!matcher.group(1).equals(from)) {
            uses.computeIfAbsent(from, p -> new TreeSet<>()).add(matcher.group(1));
          }
        }
      }
    }
    assertThat(uses).as("packages read").containsKeys("engine", "store", "upload", "publish");

    List<String> cycles = new ArrayList<>();
    for (String start : uses.keySet()) {
      Set<String> reached = new TreeSet<>();
      List<String> next = new ArrayList<>(uses.get(start));
      while (!next.isEmpty()) {
        String used = next.remove(next.size() - 1);
        if (reached.add(used)) {
          next.addAll(uses.getOrDefault(used, Set.of()));
        }
      }
      if (reached.contains(start)) {
        cycles.add(start + " uses " + uses.get(start) + " and is used back");
      }
    }
    assertThat(cycles).as("package uses: %s", uses).isEmpty();
  }
}
