package dev.writeonce.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.zip.ZipEntry;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What each engine's bundle holds: every class and service entry of the modules it is made of, and
 * nothing of anyone else's, so that it adds no third-party class to an engine's classpath.
 */
class BundleContentsIT {

  /** A bundle and the modules it is made of. */
  record Bundle(String artifact, List<String> modules) {
    Path jar() {
      return Distributions.file(artifact + "-" + Distributions.version() + ".jar");
    }

    @Override
    public String toString() {
      return artifact;
    }
  }

  static List<Bundle> bundles() {
    return List.of(
        new Bundle(
            "writeonce-hadoop", List.of("committer-core", "committer-staging", "committer-magic")),
        new Bundle(
            "writeonce-spark_2.13",
            List.of(
                "committer-core",
                "committer-staging",
                "committer-magic",
                "spark-integration",
                "rename-shim")),
        new Bundle("writeonce-hive", List.of("committer-core", "rename-shim", "hive-integration")));
  }

  @ParameterizedTest
  @MethodSource("bundles")
  void aBundleHoldsOnlyThisProjectsClassesAndEveryClassOfItsModules(Bundle bundle)
      throws IOException {
    Set<String> bundled = new TreeSet<>();
    try (JarFile jar = new JarFile(bundle.jar().toFile())) {
      jar.stream().filter(e -> !e.isDirectory()).forEach(e -> bundled.add(e.getName()));
    }
    assertThat(bundled)
        .as("classes of %s outside dev/writeonce/", bundle)
        .filteredOn(name -> name.endsWith(".class"))
        .allMatch(name -> name.startsWith("dev/writeonce/"));
    assertThat(bundled)
        .as("entries of %s that are neither this project's nor its metadata", bundle)
        .allMatch(name -> name.startsWith("dev/writeonce/") || name.startsWith("META-INF/"));
    assertThat(bundled).contains("META-INF/LICENSE", "META-INF/NOTICE");
    Set<String> expected = new TreeSet<>();
    for (String module : bundle.modules()) {
      try (JarFile jar = new JarFile(moduleJar(module).toFile())) {
        jar.stream()
            .map(ZipEntry::getName)
            .filter(name -> name.startsWith("dev/writeonce/") && !name.endsWith("/"))
            .forEach(expected::add);
      }
    }
    assertThat(bundled).as("%s holds every file of its modules", bundle).containsAll(expected);
  }

  @ParameterizedTest
  @MethodSource("bundles")
  void aBundlesServiceFilesNameEveryProviderOfItsModules(Bundle bundle) throws IOException {
    Map<String, Set<String>> expected = new TreeMap<>();
    for (String module : bundle.modules()) {
      services(moduleJar(module))
          .forEach(
              (service, providers) ->
                  expected.computeIfAbsent(service, s -> new LinkedHashSet<>()).addAll(providers));
    }
    Map<String, Set<String>> bundled = services(bundle.jar());

    assertThat(bundled.keySet()).as("service files of %s", bundle).isEqualTo(expected.keySet());
    expected.forEach(
        (service, providers) ->
            assertThat(bundled.get(service))
                .as("providers of %s in %s", service, bundle)
                .containsExactlyInAnyOrderElementsOf(providers));
  }

  @ParameterizedTest
  @MethodSource("bundles")
  void aBundleCarriesItsSourcesLicenseAndNotice(Bundle bundle) throws IOException {
    Path sources =
        Distributions.file(bundle.artifact() + "-" + Distributions.version() + "-sources.jar");
    try (JarFile jar = new JarFile(sources.toFile())) {
      assertThat(jar.stream().map(ZipEntry::getName))
          .as("sources of %s", bundle)
          .anyMatch(name -> name.startsWith("dev/writeonce/") && name.endsWith(".java"));
    }
  }

  private static Path moduleJar(String module) {
    return Distributions.dir()
        .resolve("modules")
        .resolve(module + "-" + Distributions.version() + ".jar");
  }

  /** Service interface → provider class names, from a jar's {@code META-INF/services}. */
  private static Map<String, Set<String>> services(Path jarPath) throws IOException {
    Map<String, Set<String>> services = new TreeMap<>();
    try (JarFile jar = new JarFile(jarPath.toFile())) {
      for (ZipEntry entry : jar.stream().toList()) {
        String name = entry.getName();
        if (!name.startsWith("META-INF/services/") || entry.isDirectory()) {
          continue;
        }
        Set<String> providers = new LinkedHashSet<>();
        try (InputStream in = jar.getInputStream(entry)) {
          for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
            String provider = line.replaceAll("#.*", "").trim();
            if (!provider.isEmpty()) {
              providers.add(provider);
            }
          }
        }
        services.put(name.substring("META-INF/services/".length()), providers);
      }
    }
    return services;
  }
}
