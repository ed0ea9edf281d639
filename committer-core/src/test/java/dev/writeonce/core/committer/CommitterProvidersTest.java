package dev.writeonce.core.committer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a user reads when {@code writeonce.committer} finds no committer. */
class CommitterProvidersTest {

  @Test
  void aMisspeltNameIsCalledUnknownAndTheKnownNamesAreListed() {
    assertThatThrownBy(
            () ->
                CommitterProviders.find("direcotry", CommitterProvidersTest.class.getClassLoader()))
        .isInstanceOf(IOException.class)
        .hasMessage(
            "writeonce.committer = 'direcotry' is not a committer's name: use one of directory,"
                + " magic, partitioned");
  }

  @Test
  void aCommentPastedIntoTheValueIsPointedOut() {
    assertThat(CommitterProviders.notFound("directory        # or: magic, with", List.of()))
        .startsWith(
            "writeonce.committer = 'directory        # or: magic, with' is not a committer's")
        .endsWith(
            "A comment after a value in a properties file becomes part of the value: put comments"
                + " on lines of their own");
  }

  @Test
  void aShippedCommitterWhoseJarIsMissingNamesTheJarAndTheBundle() {
    assertThat(CommitterProviders.notFound("magic", List.of("directory", "partitioned")))
        .isEqualTo(
            "writeonce.committer = 'magic' is a committer of this library, but its jar,"
                + " committer-magic, is not on the job's class path (committers found: directory,"
                + " partitioned). Ship the engine's bundle (writeonce-spark_2.13, writeonce-hadoop"
                + " or writeonce-hive), which holds every committer");
  }
}
