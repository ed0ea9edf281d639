package dev.writeonce.core.json;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.model.ConflictMode;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.JobManifest;
import dev.writeonce.core.model.ManifestChunk;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.TaskIntent;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.model.UploadPart;
import java.io.IOException;
import java.util.List;
import java.util.TreeMap;

/**
 * JSON formats of the task and job manifests. Each document carries a format name and version;
 * readers refuse other versions and validate every record, so a garbled manifest is refused before
 * anything is completed or deleted.
 */
public final class ManifestFormats {

  public static final String TASK_MANIFEST_FORMAT = "writeonce.task-manifest";
  public static final int TASK_MANIFEST_VERSION = 1;
  public static final String TASK_INTENT_FORMAT = "writeonce.task-intent";
  public static final int TASK_INTENT_VERSION = 1;
  public static final String JOB_MANIFEST_FORMAT = "writeonce.job-manifest";
  public static final int JOB_MANIFEST_VERSION = 1;

  /** The version of a job manifest whose uploads are listed in chunks. */
  public static final int CHUNKED_JOB_MANIFEST_VERSION = 2;

  public static final String MANIFEST_CHUNK_FORMAT = "writeonce.job-manifest-chunk";
  public static final int MANIFEST_CHUNK_VERSION = 1;

  private ManifestFormats() {}

  public static byte[] toJson(TaskManifest manifest) {
    return Json.write(
        out -> {
          out.writeStartObject();
          out.writeStringField("format", TASK_MANIFEST_FORMAT);
          out.writeNumberField("version", TASK_MANIFEST_VERSION);
          out.writeStringField("jobId", manifest.jobId());
          out.writeStringField("taskAttemptId", manifest.taskAttemptId());
          Json.writeLongMap(out, "statistics", new TreeMap<>(manifest.statistics()));
          writeUploads(out, manifest.uploads());
          out.writeEndObject();
        });
  }

  public static TaskManifest taskManifestFromJson(byte[] data, String source)
      throws FormatException {
    ObjectNode root = Json.readObject(data, source);
    Json.requireFormat(root, TASK_MANIFEST_FORMAT, TASK_MANIFEST_VERSION, source);
    List<PendingUpload> uploads = Json.list(root, "uploads", source, ManifestFormats::readUpload);
    try {
      return new TaskManifest(
          Json.text(root, "jobId", source),
          Json.text(root, "taskAttemptId", source),
          uploads,
          Json.longMap(root, "statistics", source, false));
    } catch (IllegalArgumentException e) {
      throw new FormatException(source, e.getMessage(), e);
    }
  }

  public static byte[] toJson(TaskIntent intent) {
    return Json.write(
        out -> {
          out.writeStartObject();
          out.writeStringField("format", TASK_INTENT_FORMAT);
          out.writeNumberField("version", TASK_INTENT_VERSION);
          out.writeStringField("jobId", intent.jobId());
          out.writeStringField("taskAttemptId", intent.taskAttemptId());
          out.writeArrayFieldStart("keys");
          for (String key : intent.keys()) {
            out.writeString(key);
          }
          out.writeEndArray();
          out.writeEndObject();
        });
  }

  public static TaskIntent taskIntentFromJson(byte[] data, String source) throws FormatException {
    ObjectNode root = Json.readObject(data, source);
    Json.requireFormat(root, TASK_INTENT_FORMAT, TASK_INTENT_VERSION, source);
    try {
      return new TaskIntent(
          Json.text(root, "jobId", source),
          Json.text(root, "taskAttemptId", source),
          Json.texts(root, "keys", source));
    } catch (IllegalArgumentException e) {
      throw new FormatException(source, e.getMessage(), e);
    }
  }

  /**
   * A job manifest: version 1 when it lists its uploads inline, version 2 when it names chunks.
   * Readers of version 1 only refuse a version 2 manifest rather than misread it.
   */
  public static byte[] toJson(JobManifest manifest) {
    return Json.write(
        out -> {
          out.writeStartObject();
          out.writeStringField("format", JOB_MANIFEST_FORMAT);
          out.writeNumberField(
              "version",
              manifest.isChunked() ? CHUNKED_JOB_MANIFEST_VERSION : JOB_MANIFEST_VERSION);
          out.writeStringField("jobId", manifest.jobId());
          out.writeStringField("destination", manifest.destination().toString());
          out.writeStringField("conflictMode", manifest.conflictMode().id());
          out.writeStringField("committer", manifest.committer());
          out.writeNumberField("createdAtMillis", manifest.createdAtMillis());
          out.writeNumberField("fileCount", manifest.fileCount());
          out.writeNumberField("totalBytes", manifest.totalBytes());
          if (manifest.isChunked()) {
            out.writeArrayFieldStart("chunks");
            for (ManifestChunk chunk : manifest.chunks()) {
              out.writeStartObject();
              out.writeStringField("key", chunk.key());
              out.writeNumberField("fileCount", chunk.fileCount());
              out.writeNumberField("totalBytes", chunk.totalBytes());
              out.writeStringField("sha256", chunk.sha256());
              out.writeEndObject();
            }
            out.writeEndArray();
          } else {
            writeUploads(out, manifest.uploads());
          }
          out.writeArrayFieldStart("deletes");
          for (String key : manifest.deletes()) {
            out.writeString(key);
          }
          out.writeEndArray();
          out.writeEndObject();
        });
  }

  /** A chunk of a large job manifest: a share of its uploads, in the job's order. */
  public static byte[] chunkToJson(String jobId, int index, List<PendingUpload> uploads) {
    return Json.write(
        out -> {
          out.writeStartObject();
          out.writeStringField("format", MANIFEST_CHUNK_FORMAT);
          out.writeNumberField("version", MANIFEST_CHUNK_VERSION);
          out.writeStringField("jobId", jobId);
          out.writeNumberField("index", index);
          writeUploads(out, uploads);
          out.writeEndObject();
        });
  }

  /** The uploads of a chunk, checked to belong to the given job. */
  public static List<PendingUpload> chunkFromJson(byte[] data, String jobId, String source)
      throws FormatException {
    ObjectNode root = Json.readObject(data, source);
    Json.requireFormat(root, MANIFEST_CHUNK_FORMAT, MANIFEST_CHUNK_VERSION, source);
    String owner = Json.text(root, "jobId", source);
    if (!owner.equals(jobId)) {
      throw new FormatException(source, "is a chunk of job " + owner + ", not of " + jobId);
    }
    return Json.list(root, "uploads", source, ManifestFormats::readUpload);
  }

  public static JobManifest jobManifestFromJson(byte[] data, String source) throws FormatException {
    ObjectNode root = Json.readObject(data, source);
    long version =
        Json.requireFormat(
            root, JOB_MANIFEST_FORMAT, JOB_MANIFEST_VERSION, CHUNKED_JOB_MANIFEST_VERSION, source);
    boolean chunked = version == CHUNKED_JOB_MANIFEST_VERSION;
    List<PendingUpload> uploads =
        chunked ? List.of() : Json.list(root, "uploads", source, ManifestFormats::readUpload);
    List<ManifestChunk> chunks =
        chunked ? Json.list(root, "chunks", source, ManifestFormats::readChunk) : List.of();
    JobManifest manifest;
    try {
      manifest =
          new JobManifest(
              Json.text(root, "jobId", source),
              Destination.of(Json.text(root, "destination", source)),
              ConflictMode.parse(Json.text(root, "conflictMode", source)),
              Json.text(root, "committer", source),
              Json.number(root, "createdAtMillis", source),
              uploads,
              Json.texts(root, "deletes", source),
              chunks);
    } catch (IllegalArgumentException e) {
      throw new FormatException(source, e.getMessage(), e);
    }
    if (chunked && chunks.isEmpty()) {
      throw new FormatException(source, "is a chunked job manifest that names no chunk");
    }
    long fileCount = Json.number(root, "fileCount", source);
    long totalBytes = Json.number(root, "totalBytes", source);
    if (fileCount != manifest.fileCount() || totalBytes != manifest.totalBytes()) {
      throw new FormatException(
          source,
          "declares "
              + fileCount
              + " files and "
              + totalBytes
              + " bytes but lists "
              + manifest.fileCount()
              + " files and "
              + manifest.totalBytes()
              + " bytes");
    }
    return manifest;
  }

  private static ManifestChunk readChunk(JsonNode node, String where) throws FormatException {
    long files = Json.number(node, "fileCount", where);
    if (files < 1 || files > Integer.MAX_VALUE) {
      throw new FormatException(where, "declares " + files + " files");
    }
    try {
      return new ManifestChunk(
          Json.text(node, "key", where),
          (int) files,
          Json.number(node, "totalBytes", where),
          Json.text(node, "sha256", where));
    } catch (IllegalArgumentException e) {
      throw new FormatException(where, e.getMessage(), e);
    }
  }

  private static void writeUploads(JsonGenerator out, List<PendingUpload> uploads)
      throws IOException {
    out.writeArrayFieldStart("uploads");
    for (PendingUpload upload : uploads) {
      out.writeStartObject();
      out.writeStringField("bucket", upload.bucket());
      out.writeStringField("key", upload.key());
      out.writeStringField("uploadId", upload.uploadId());
      out.writeStringField("taskAttempt", upload.taskAttempt());
      out.writeNumberField("length", upload.length());
      writeParts(out, upload.parts());
      out.writeEndObject();
    }
    out.writeEndArray();
  }

  static void writeParts(JsonGenerator out, List<UploadPart> parts) throws IOException {
    out.writeArrayFieldStart("parts");
    for (UploadPart part : parts) {
      out.writeStartObject();
      out.writeNumberField("number", part.number());
      out.writeStringField("etag", part.etag());
      out.writeNumberField("size", part.size());
      out.writeEndObject();
    }
    out.writeEndArray();
  }

  private static PendingUpload readUpload(JsonNode node, String where) throws FormatException {
    List<UploadPart> parts = readParts(node, where);
    PendingUpload upload;
    try {
      upload =
          new PendingUpload(
              Json.text(node, "bucket", where),
              Json.text(node, "key", where),
              Json.text(node, "uploadId", where),
              parts,
              Json.text(node, "taskAttempt", where));
    } catch (IllegalArgumentException e) {
      throw new FormatException(where, e.getMessage(), e);
    }
    long length = Json.number(node, "length", where);
    if (length != upload.length()) {
      throw new FormatException(
          where,
          "declares length " + length + " but its parts add up to " + upload.length() + " bytes");
    }
    return upload;
  }

  static List<UploadPart> readParts(JsonNode node, String where) throws FormatException {
    return Json.list(
        node,
        "parts",
        where,
        (part, partWhere) -> {
          try {
            long number = Json.number(part, "number", partWhere);
            if (number < 1 || number > UploadPart.MAX_PARTS) {
              throw new FormatException(partWhere, "part number " + number + " out of range");
            }
            return new UploadPart(
                (int) number,
                Json.text(part, "etag", partWhere),
                Json.number(part, "size", partWhere));
          } catch (IllegalArgumentException e) {
            throw new FormatException(partWhere, e.getMessage(), e);
          }
        });
  }
}
