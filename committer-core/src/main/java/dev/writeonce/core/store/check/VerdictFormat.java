package dev.writeonce.core.store.check;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * A store check's report as one JSON document (format {@code writeonce.store-verdict}, version 1):
 * what a job carries to its tasks and what a host keeps on disk. A document that does not name
 * every capability this library checks today, or names one it does not know, was made by another
 * release of the check and is read as absent, so that the store is checked again.
 */
final class VerdictFormat {

  static final String FORMAT = "writeonce.store-verdict";
  static final int VERSION = 1;

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private VerdictFormat() {}

  /** A report and when this host recorded it, on the local clock. */
  record Recorded(StoreReport report, long recordedAtMillis) {}

  /**
   * What a verdict carried without its answers says of each: the job's tasks need only verdicts.
   */
  static final String CARRIED_ANSWER = "as the job's driver found it";

  /**
   * @param recordedAtMillis when the verdict's check ran, on the local clock of the host that ran
   *     it: the verdict ages from then wherever it travels
   * @param withAnswers whether to keep the store's answer of each finding (a host's file does; what
   *     a job carries to every task does not, to stay small)
   */
  static String write(StoreReport report, long recordedAtMillis, boolean withAnswers) {
    ObjectNode root = MAPPER.createObjectNode();
    root.put("format", FORMAT);
    root.put("version", VERSION);
    root.put("endpoint", report.endpoint());
    root.put("bucket", report.bucket());
    root.put("server", report.server());
    root.put("checkedAtMillis", report.checkedAtMillis());
    root.put("recordedAtMillis", recordedAtMillis);
    root.put("requests", report.requests());
    if (withAnswers) {
      ArrayNode findings = root.putArray("findings");
      for (StoreReport.Finding finding : report.findings()) {
        ObjectNode entry = findings.addObject();
        entry.put("capability", finding.capability().id());
        entry.put("verdict", finding.verdict().id());
        entry.put("answer", finding.answer());
      }
    } else {
      ObjectNode verdicts = root.putObject("verdicts");
      for (StoreReport.Finding finding : report.findings()) {
        verdicts.put(finding.capability().id(), finding.verdict().id());
      }
    }
    try {
      return MAPPER.writeValueAsString(root);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException("writing a store verdict to memory failed", e);
    }
  }

  /** The report in a document, or empty when it is not one this release wrote whole. */
  static Optional<Recorded> read(String text) {
    try {
      JsonNode root = MAPPER.readTree(text);
      if (root == null
          || !FORMAT.equals(root.path("format").asText())
          || root.path("version").asInt() != VERSION) {
        return Optional.empty();
      }
      List<StoreReport.Finding> findings = new ArrayList<>();
      for (JsonNode entry : root.path("findings")) {
        findings.add(
            new StoreReport.Finding(
                Capability.of(text(entry, "capability")),
                verdict(text(entry, "verdict")),
                text(entry, "answer")));
      }
      root.path("verdicts")
          .fields()
          .forEachRemaining(
              entry ->
                  findings.add(
                      new StoreReport.Finding(
                          Capability.of(entry.getKey()),
                          verdict(entry.getValue().asText()),
                          CARRIED_ANSWER)));
      List<Capability> named = findings.stream().map(StoreReport.Finding::capability).toList();
      if (!named.equals(Arrays.asList(Capability.values()))) {
        return Optional.empty();
      }
      StoreReport report =
          new StoreReport(
              text(root, "endpoint"),
              text(root, "bucket"),
              root.path("server").asText(""),
              number(root, "checkedAtMillis"),
              (int) number(root, "requests"),
              findings);
      return Optional.of(new Recorded(report, number(root, "recordedAtMillis")));
    } catch (IOException | RuntimeException unreadable) {
      return Optional.empty();
    }
  }

  private static String text(JsonNode node, String field) {
    JsonNode value = node.get(field);
    if (value == null || !value.isTextual()) {
      throw new IllegalArgumentException("no text field " + field);
    }
    return value.asText();
  }

  private static long number(JsonNode node, String field) {
    JsonNode value = node.get(field);
    if (value == null || !value.canConvertToLong()) {
      throw new IllegalArgumentException("no number field " + field);
    }
    return value.asLong();
  }

  private static Verdict verdict(String id) {
    for (Verdict verdict : Verdict.values()) {
      if (verdict.id().equals(id)) {
        return verdict;
      }
    }
    throw new IllegalArgumentException("unknown verdict " + id);
  }
}
