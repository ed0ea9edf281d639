package dev.writeonce.core.testing.s3;

import java.io.IOException;
import java.net.URI;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.fs.s3a.S3ClientFactory;
import software.amazon.awssdk.services.s3.S3AsyncClient;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.transfer.s3.S3TransferManager;

/**
 * Gives S3A ({@code fs.s3a.s3.client.factory.impl}) clients of a {@link MemoryS3}. S3A creates the
 * factory by class name, so stores are found through the endpoint: {@link #register} names an
 * endpoint for a store and a hook, and every S3A instance configured with that {@code
 * fs.s3a.endpoint} gets a client of its own (one simulated process) on them.
 */
public final class MemoryS3ClientFactory implements S3ClientFactory {

  private record Registration(MemoryS3 store, RequestHook hook) {}

  private static final Map<String, Registration> REGISTERED = new ConcurrentHashMap<>();
  private static final AtomicLong ENDPOINTS = new AtomicLong();

  /** S3A builds it by reflection; it has no state of its own. */
  public MemoryS3ClientFactory() {}

  /**
   * Registers a store and a hook; returns the endpoint to set as {@code fs.s3a.endpoint}. The
   * endpoint is never resolved or connected to.
   */
  public static String register(MemoryS3 store, RequestHook hook) {
    String endpoint = "http://store-" + ENDPOINTS.incrementAndGet() + ".memory.test:9000";
    REGISTERED.put(endpoint, new Registration(store, hook));
    return endpoint;
  }

  /** Forgets an endpoint; S3A instances created later with it fail to start. */
  public static void unregister(String endpoint) {
    REGISTERED.remove(endpoint);
  }

  @Override
  public S3Client createS3Client(URI uri, S3ClientCreationParameters parameters)
      throws IOException {
    return client(parameters);
  }

  @Override
  public S3AsyncClient createS3AsyncClient(URI uri, S3ClientCreationParameters parameters)
      throws IOException {
    return new MemoryS3AsyncClient(client(parameters));
  }

  /** A real transfer manager whose work runs on the calling thread. */
  @Override
  public S3TransferManager createS3TransferManager(S3AsyncClient asyncClient) {
    return S3TransferManager.builder().s3Client(asyncClient).executor(Runnable::run).build();
  }

  private static MemoryS3Client client(S3ClientCreationParameters parameters) throws IOException {
    String endpoint = parameters.getEndpoint();
    Registration registration = endpoint == null ? null : REGISTERED.get(endpoint.trim());
    if (registration == null) {
      throw new IOException(
          "No MemoryS3 is registered for fs.s3a.endpoint '"
              + endpoint
              + "': get the endpoint from MemoryS3ClientFactory.register");
    }
    return new MemoryS3Client(registration.store(), registration.hook());
  }
}
