package dev.writeonce.core.json;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.writeonce.core.errors.FormatException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;

/**
 * The small part of Jackson the formats use: a generator for writing and a tree for reading, with
 * field accessors whose errors name the file. Only stable Jackson 2.x API is used, because the
 * engines bring their own Jackson version.
 */
final class Json {

  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final JsonFactory FACTORY = MAPPER.getFactory();

  private Json() {}

  /** Writes one JSON document. */
  interface Writer {
    void write(JsonGenerator generator) throws IOException;
  }

  static byte[] write(Writer writer) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(4096);
    try (JsonGenerator generator = FACTORY.createGenerator(out)) {
      generator.useDefaultPrettyPrinter();
      writer.write(generator);
    } catch (IOException e) {
      throw new UncheckedIOException("writing JSON to memory failed", e);
    }
    return out.toByteArray();
  }

  /** Parses a document that must be a JSON object. */
  static ObjectNode readObject(byte[] data, String source) throws FormatException {
    JsonNode node;
    try {
      node = MAPPER.readTree(data);
    } catch (JsonProcessingException e) {
      JsonLocation at = e.getLocation();
      String where =
          at == null ? "" : " at line " + at.getLineNr() + ", column " + at.getColumnNr();
      throw new FormatException(
          source, "not valid JSON (truncated or garbled?)" + where + ": " + e.getOriginalMessage());
    } catch (IOException e) {
      throw new FormatException(source, "unreadable: " + e.getMessage(), e);
    }
    if (node == null || node.isMissingNode()) {
      throw new FormatException(source, "empty file");
    }
    if (!node.isObject()) {
      throw new FormatException(source, "expected a JSON object, found " + node.getNodeType());
    }
    return (ObjectNode) node;
  }

  /** Checks the format name and version fields of a document. */
  static void requireFormat(ObjectNode root, String format, int version, String source)
      throws FormatException {
    requireFormat(root, format, version, version, source);
  }

  /** Checks the format name, and a version from {@code oldest} to {@code newest}; returns it. */
  static long requireFormat(ObjectNode root, String format, int oldest, int newest, String source)
      throws FormatException {
    String found = text(root, "format", source);
    if (!format.equals(found)) {
      throw new FormatException(source, "format is '" + found + "', expected '" + format + "'");
    }
    long foundVersion = number(root, "version", source);
    if (foundVersion < oldest || foundVersion > newest) {
      throw new FormatException(
          source,
          "unsupported "
              + format
              + " version "
              + foundVersion
              + ": this library reads version "
              + (oldest == newest ? String.valueOf(newest) : oldest + " to " + newest)
              + "; use the library version that wrote it");
    }
    return foundVersion;
  }

  static JsonNode field(JsonNode node, String name, String source) throws FormatException {
    JsonNode value = node.get(name);
    if (value == null || value.isNull()) {
      throw new FormatException(source, "missing field '" + name + "'");
    }
    return value;
  }

  static String text(JsonNode node, String name, String source) throws FormatException {
    JsonNode value = field(node, name, source);
    if (!value.isTextual()) {
      throw new FormatException(source, "field '" + name + "' must be a string");
    }
    return value.asText();
  }

  static String optionalText(JsonNode node, String name, String fallback) {
    JsonNode value = node.get(name);
    return value == null || !value.isTextual() ? fallback : value.asText();
  }

  static long number(JsonNode node, String name, String source) throws FormatException {
    JsonNode value = field(node, name, source);
    if (!value.isIntegralNumber() || !value.canConvertToLong()) {
      throw new FormatException(source, "field '" + name + "' must be a whole number");
    }
    return value.asLong();
  }

  static JsonNode array(JsonNode node, String name, String source) throws FormatException {
    JsonNode value = field(node, name, source);
    if (!value.isArray()) {
      throw new FormatException(source, "field '" + name + "' must be an array");
    }
    return value;
  }

  /** Reads an array element by element; an element's error names its index. */
  static <T> List<T> list(JsonNode node, String name, String source, ElementReader<T> reader)
      throws FormatException {
    JsonNode array = array(node, name, source);
    List<T> result = new ArrayList<>(array.size());
    for (int i = 0; i < array.size(); i++) {
      result.add(reader.read(array.get(i), source + " " + name + "[" + i + "]"));
    }
    return result;
  }

  /** Reads one element of an array. */
  interface ElementReader<T> {
    T read(JsonNode node, String where) throws FormatException;
  }

  static List<String> texts(JsonNode node, String name, String source) throws FormatException {
    return list(
        node,
        name,
        source,
        (element, where) -> {
          if (!element.isTextual()) {
            throw new FormatException(where, "must be a string");
          }
          return element.asText();
        });
  }

  static <V> Map<String, V> map(
      JsonNode node,
      String name,
      String source,
      BiFunction<JsonNode, String, V> converter,
      boolean required)
      throws FormatException {
    JsonNode object = node.get(name);
    if (object == null || object.isNull()) {
      if (required) {
        throw new FormatException(source, "missing field '" + name + "'");
      }
      return Map.of();
    }
    if (!object.isObject()) {
      throw new FormatException(source, "field '" + name + "' must be an object");
    }
    Map<String, V> result = new LinkedHashMap<>();
    Iterator<Map.Entry<String, JsonNode>> fields = object.fields();
    while (fields.hasNext()) {
      Map.Entry<String, JsonNode> entry = fields.next();
      V value = converter.apply(entry.getValue(), entry.getKey());
      if (value == null) {
        throw new FormatException(
            source, "field '" + name + "." + entry.getKey() + "' has a value of the wrong type");
      }
      result.put(entry.getKey(), value);
    }
    return result;
  }

  static Map<String, Long> longMap(JsonNode node, String name, String source, boolean required)
      throws FormatException {
    return map(node, name, source, (v, k) -> v.isIntegralNumber() ? v.asLong() : null, required);
  }

  static Map<String, String> textMap(JsonNode node, String name, String source, boolean required)
      throws FormatException {
    return map(node, name, source, (v, k) -> v.isTextual() ? v.asText() : null, required);
  }

  static void writeLongMap(JsonGenerator out, String name, Map<String, Long> values)
      throws IOException {
    out.writeObjectFieldStart(name);
    for (Map.Entry<String, Long> entry : values.entrySet()) {
      out.writeNumberField(entry.getKey(), entry.getValue());
    }
    out.writeEndObject();
  }

  static void writeTextMap(JsonGenerator out, String name, Map<String, String> values)
      throws IOException {
    out.writeObjectFieldStart(name);
    for (Map.Entry<String, String> entry : values.entrySet()) {
      out.writeStringField(entry.getKey(), entry.getValue());
    }
    out.writeEndObject();
  }
}
