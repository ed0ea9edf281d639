package dev.writeonce.core.simulation;

import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.json.RetireRecordFormat;
import dev.writeonce.core.model.RetireRecord;
import dev.writeonce.core.publish.Generations;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** What a retire record names, for the simulation's last check: keys, or key prefixes. */
final class RecordNames {

  private RecordNames() {}

  static List<String> of(byte[] body) {
    if (!RetireRecordFormat.isJson(body)) {
      return RetireRecordFormat.legacyLocations(body);
    }
    try {
      RetireRecord record = RetireRecordFormat.fromJson(body, "record");
      if (record.state() == RetireRecord.State.CLAIMED) {
        return List.of(
            PublicationSimulation.ROOT_DESTINATION.keyOf(Generations.runDir(record.run())));
      }
      List<String> names = new ArrayList<>();
      record.own().forEach(object -> names.add(object.key()));
      record.superseded().forEach(object -> names.add(object.key()));
      return names;
    } catch (FormatException e) {
      throw new IllegalStateException(e);
    }
  }

  static List<String> of(String text) {
    return of(text.getBytes(StandardCharsets.UTF_8));
  }
}
