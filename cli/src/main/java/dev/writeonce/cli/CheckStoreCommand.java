package dev.writeonce.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.writeonce.core.store.check.Capability;
import dev.writeonce.core.store.check.StoreCheck;
import dev.writeonce.core.store.check.StoreReport;
import dev.writeonce.core.store.check.StoreTrust;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Spec;

@Command(
    name = "check-store",
    mixinStandardHelpOptions = true,
    description = {
      "Probe what the store does with each request this library's guarantees rest on, under a"
          + " scratch prefix of the destination that is removed afterwards, and report per"
          + " capability: honoured, ignored (answered as if it had, but reading back shows it did"
          + " not), refused or not-applicable; the guarantee that rests on it; and what the"
          + " library does about it.",
      "Exit code 0 when every guarantee holds, 4 when the store cannot be trusted with one (the"
          + " committers refuse it unless writeonce.store.check.trust names the capability)."
    })
final class CheckStoreCommand implements Callable<Integer> {

  /** Exit code: the store does not honour a capability a guarantee rests on. */
  static final int UNTRUSTED = 4;

  @Mixin StoreAccess.Options store;

  @Mixin CommandOutput.Options format;

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    CommandOutput output = new CommandOutput(spec, format, "check-store");
    try (StoreAccess access = StoreAccess.open(store)) {
      StoreCheck check = StoreCheck.forFileSystem(access.fileSystem(), access.destination.prefix());
      // Each probe's line goes to standard error as it lands: a slow store shows where it is.
      StoreReport report = check.run(line -> spec.commandLine().getErr().println(line));
      // Always probed afresh: what it found replaces the verdict this host kept.
      StoreTrust.refresh(report, access.fileSystem().getConf());
      Set<Capability> trusted = StoreTrust.trusted(access.fileSystem().getConf());
      List<StoreReport.Finding> broken = report.brokenGuarantees(trusted);
      ObjectNode root = output.root();
      root.put("destination", access.destination.toString());
      root.put("endpoint", report.endpoint());
      root.put("server", report.server());
      root.put("checkedAt", CommandOutput.instant(report.checkedAtMillis()));
      root.put("probeRequests", report.requests());
      output.say("store " + report.endpoint() + describeServer(report));
      output.say(
          String.format(
              "%-24s %-14s %-9s %s", "CAPABILITY", "VERDICT", "RELIED", "WHAT THE LIBRARY DOES"));
      for (StoreReport.Finding finding : report.findings()) {
        Capability capability = finding.capability();
        ObjectNode entry = output.entry("capabilities");
        entry.put("id", capability.id());
        entry.put("title", capability.title());
        entry.put("verdict", finding.verdict().id());
        entry.put("answer", finding.answer());
        entry.put("reliance", capability.reliance().name().toLowerCase(java.util.Locale.ROOT));
        entry.put("guarantee", capability.guarantee());
        entry.put("action", finding.action());
        entry.put("breaksGuarantee", capability.breaksGuarantee(finding.verdict()));
        entry.put("trusted", trusted.contains(capability));
        output.say(
            String.format(
                "%-24s %-14s %-9s %s",
                capability.id(),
                finding.verdict().id(),
                capability.reliance().name().toLowerCase(java.util.Locale.ROOT),
                finding.action()));
        output.say(String.format("%-24s %s", "", "store: " + finding.answer()));
      }
      root.put("guaranteesHold", broken.isEmpty());
      if (broken.isEmpty()) {
        output.say(
            "every guarantee holds on this store ("
                + report.requests()
                + " requests); committers check it once per process, as this did");
        return output.finish(Main.OK, report.requests());
      }
      for (StoreReport.Finding finding : broken) {
        output.error(
            "a guarantee cannot be given: "
                + finding.capability().id()
                + " is "
                + finding.verdict().id()
                + " ("
                + finding.answer()
                + "): "
                + finding.capability().guarantee()
                + ". The committers refuse this store unless "
                + StoreTrust.TRUST
                + " names "
                + finding.capability().id()
                + ", at your own risk");
      }
      return output.finish(UNTRUSTED, report.requests());
    }
  }

  private static String describeServer(StoreReport report) {
    return report.server().isEmpty() ? " (no Server header)" : " (Server: " + report.server() + ")";
  }
}
