package dev.writeonce.teststore;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Object;

/** What a test sees of a bucket, through the store's admin client, outside the code under test. */
public final class BucketView {

  private final TestStore store;
  private final String bucket;

  public BucketView(TestStore store, String bucket) {
    this.store = store;
    this.bucket = bucket;
  }

  public String uri(String path) {
    return "s3a://" + bucket + "/" + path;
  }

  public List<String> keys(String prefix) {
    return store
        .adminClient()
        .listObjectsV2Paginator(b -> b.bucket(bucket).prefix(prefix))
        .contents()
        .stream()
        .map(S3Object::key)
        .toList();
  }

  public Map<String, String> etags(String prefix) {
    Map<String, String> etags = new TreeMap<>();
    store
        .adminClient()
        .listObjectsV2Paginator(b -> b.bucket(bucket).prefix(prefix))
        .contents()
        .forEach(o -> etags.put(o.key(), o.eTag()));
    return etags;
  }

  public String read(String key) throws IOException {
    try (ResponseInputStream<GetObjectResponse> in =
        store.adminClient().getObject(b -> b.bucket(bucket).key(key))) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  public long size(String key) {
    return store.adminClient().headObject(b -> b.bucket(bucket).key(key)).contentLength();
  }

  public void put(String key, String text) {
    store.adminClient().putObject(b -> b.bucket(bucket).key(key), RequestBody.fromString(text));
  }

  public void delete(String key) {
    store.adminClient().deleteObject(b -> b.bucket(bucket).key(key));
  }

  /**
   * Keys with an open upload under a prefix, from one listing by prefix: only for stores whose
   * check found ListMultipartUploads by prefix honoured (MinIO lists exact keys only).
   */
  public List<String> openUploadsUnder(String prefix) {
    return store
        .adminClient()
        .listMultipartUploads(b -> b.bucket(bucket).prefix(prefix))
        .uploads()
        .stream()
        .map(u -> u.key())
        .toList();
  }

  /** Keys with an open upload, asked key by key: MinIO lists uploads of exact keys only. */
  public List<String> openUploads(Collection<String> keys) {
    List<String> open = new ArrayList<>();
    for (String key : keys) {
      boolean any =
          store
              .adminClient()
              .listMultipartUploads(b -> b.bucket(bucket).prefix(key))
              .uploads()
              .stream()
              .anyMatch(u -> u.key().equals(key));
      if (any) {
        open.add(key);
      }
    }
    return open;
  }
}
