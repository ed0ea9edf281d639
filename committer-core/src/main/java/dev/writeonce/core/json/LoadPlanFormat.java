package dev.writeonce.core.json;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.model.LoadPlan;
import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;

/**
 * JSON of a Hive statement's load plan ({@code writeonce.load-plan}, version 1). A plan written
 * before plans were JSON, a properties text ({@code <ext>.mode=keep|replace}, {@code
 * <ext>.target=<uri>}), is still read, so a statement in flight during an upgrade keeps its plan.
 */
public final class LoadPlanFormat {

  public static final String FORMAT = "writeonce.load-plan";
  public static final int VERSION = 1;

  private LoadPlanFormat() {}

  /** The plan, its loads sorted by directory so that equal plans are equal bytes. */
  public static byte[] toJson(LoadPlan plan) {
    return Json.write(
        out -> {
          out.writeStartObject();
          out.writeStringField("format", FORMAT);
          out.writeNumberField("version", VERSION);
          out.writeObjectFieldStart("loads");
          for (Map.Entry<String, LoadPlan.Load> load : new TreeMap<>(plan.loads()).entrySet()) {
            out.writeObjectFieldStart(load.getKey());
            out.writeStringField("mode", load.getValue().mode().name().toLowerCase(Locale.ROOT));
            if (load.getValue().target().isPresent()) {
              out.writeStringField("target", load.getValue().target().get());
            }
            out.writeEndObject();
          }
          out.writeEndObject();
          out.writeEndObject();
        });
  }

  /**
   * Reads a plan, JSON or the earlier properties text.
   *
   * @param source the plan's location, for messages
   */
  public static LoadPlan fromBytes(byte[] data, String source) throws FormatException {
    String text = new String(data, StandardCharsets.UTF_8).strip();
    if (!text.startsWith("{")) {
      return fromProperties(text, source);
    }
    ObjectNode root = Json.readObject(data, source);
    Json.requireFormat(root, FORMAT, VERSION, source);
    Map<String, JsonNode> loads =
        Json.map(root, "loads", source, (node, ext) -> node.isObject() ? node : null, true);
    Map<String, LoadPlan.Load> plan = new LinkedHashMap<>();
    for (Map.Entry<String, JsonNode> load : loads.entrySet()) {
      String where = source + " (loads." + load.getKey() + ")";
      plan.put(
          load.getKey(),
          new LoadPlan.Load(
              mode(Json.text(load.getValue(), "mode", where), load.getKey(), source),
              Optional.ofNullable(Json.optionalText(load.getValue(), "target", null))));
    }
    return new LoadPlan(plan);
  }

  private static LoadPlan.Mode mode(String value, String ext, String source)
      throws FormatException {
    try {
      return LoadPlan.Mode.valueOf(value.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new FormatException(
          source, "unknown load mode '" + value + "' for " + ext + " (keep or replace)");
    }
  }

  private static LoadPlan fromProperties(String text, String source) throws FormatException {
    Properties properties = new Properties();
    try {
      properties.load(new StringReader(text));
    } catch (IOException | IllegalArgumentException e) {
      throw new FormatException(source, "is neither JSON nor a load plan's properties text", e);
    }
    Map<String, LoadPlan.Mode> modes = new TreeMap<>();
    Map<String, String> targets = new TreeMap<>();
    for (String name : properties.stringPropertyNames()) {
      int dot = name.lastIndexOf('.');
      String ext = dot < 0 ? "" : name.substring(0, dot);
      String value = properties.getProperty(name);
      switch (name.substring(dot + 1)) {
        case "mode" -> modes.put(ext, mode(value, ext, source));
        case "target" -> targets.put(ext, value);
        default -> throw new FormatException(source, "unknown entry '" + name + "' in a load plan");
      }
    }
    if (!modes.keySet().containsAll(targets.keySet())) {
      throw new FormatException(source, "a target without a mode in a load plan");
    }
    Map<String, LoadPlan.Load> loads = new LinkedHashMap<>();
    modes.forEach(
        (ext, mode) ->
            loads.put(ext, new LoadPlan.Load(mode, Optional.ofNullable(targets.get(ext)))));
    return new LoadPlan(loads);
  }
}
