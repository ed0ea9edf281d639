package dev.writeonce.teststore;

import java.net.URI;
import java.util.UUID;
import org.testcontainers.containers.MinIOContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * MinIO in a container, for machines with a Docker engine ({@code WRITEONCE_MINIO_MODE=container}).
 * The image is {@code WRITEONCE_MINIO_IMAGE}, or the default below. The local process ({@link
 * LocalMinio}) is the default because it needs no engine.
 */
public final class ContainerMinio extends AbstractTestStore {

  static final String DEFAULT_IMAGE = "minio/minio:RELEASE.2025-04-22T22-12-26Z";

  private final MinIOContainer container;

  private ContainerMinio(MinIOContainer container, URI endpoint, String user, String password) {
    super("minio", endpoint, new MinioMetricsMeter(endpoint), "us-east-1", user, password);
    this.container = container;
  }

  static ContainerMinio start() {
    String image = System.getenv().getOrDefault("WRITEONCE_MINIO_IMAGE", DEFAULT_IMAGE);
    String user = "writeonce-" + UUID.randomUUID().toString().substring(0, 8);
    String password = UUID.randomUUID().toString();
    MinIOContainer container =
        new MinIOContainer(DockerImageName.parse(image).asCompatibleSubstituteFor("minio/minio"))
            .withUserName(user)
            .withPassword(password)
            .withEnv("MINIO_PROMETHEUS_AUTH_TYPE", "public");
    container.start();
    return new ContainerMinio(container, URI.create(container.getS3URL()), user, password);
  }

  @Override
  public void close() {
    adminClient().close();
    container.stop();
  }
}
