package dev.writeonce.teststore;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Removes a store's scratch directory. */
final class ScratchDirectories {

  private ScratchDirectories() {}

  static void remove(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // scratch space; a leftover directory is harmless
    }
  }
}
