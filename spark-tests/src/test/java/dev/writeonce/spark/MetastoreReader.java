package dev.writeonce.spark;

import java.io.ByteArrayInputStream;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.io.DelegatingSeekableInputStream;
import org.apache.parquet.io.InputFile;
import org.apache.parquet.io.SeekableInputStream;
import org.apache.spark.sql.catalyst.catalog.CatalogTablePartition;
import org.apache.spark.sql.catalyst.catalog.ExternalCatalog;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A reader that goes through the metastore as Hive, Spark SQL and Trino do: the partitions and
 * their locations, then the files each location holds (names starting with '_' or '.' skipped),
 * then the rows of each file from its Parquet footer. One observation is the row count of each
 * partition that has rows; a file listed and then gone when read makes the observation a failed
 * read. A location that does not exist is an empty partition, as every engine reads it.
 */
final class MetastoreReader {

  /** What one pass saw: rows by partition value, or null when a listed file was gone. */
  record Observation(Map<String, Long> rowsByPartition, String failure) {
    boolean failed() {
      return failure != null;
    }
  }

  private final ExternalCatalog catalog;
  private final String database;
  private final String table;
  private final FileSystem fs;

  MetastoreReader(
      ExternalCatalog catalog, String database, String table, Path root, Configuration conf)
      throws IOException {
    this.catalog = catalog;
    this.database = database;
    this.table = table;
    this.fs = root.getFileSystem(conf);
  }

  Observation observe() throws IOException {
    List<CatalogTablePartition> partitions =
        CollectionConverters.asJava(catalog.listPartitions(database, table, Option.empty()));
    Map<String, Long> rows = new TreeMap<>();
    for (CatalogTablePartition partition : partitions) {
      StringBuilder name = new StringBuilder();
      CollectionConverters.asJava(partition.spec())
          .forEach(
              (k, v) -> name.append(name.isEmpty() ? "" : "/").append(k).append('=').append(v));
      long count = 0;
      FileStatus[] files;
      try {
        files = fs.listStatus(new Path(partition.location()));
      } catch (FileNotFoundException e) {
        continue;
      }
      for (FileStatus file : files) {
        String fileName = file.getPath().getName();
        if (file.isDirectory() || fileName.startsWith("_") || fileName.startsWith(".")) {
          continue;
        }
        try {
          count += rowsOf(file);
        } catch (FileNotFoundException e) {
          return new Observation(null, file.getPath() + " listed, then gone");
        }
      }
      if (count > 0) {
        rows.put(name.toString(), count);
      }
    }
    return new Observation(rows, null);
  }

  /** The file's rows from its footer, reading the (small) file with one GET. */
  private long rowsOf(FileStatus file) throws IOException {
    byte[] data = new byte[(int) file.getLen()];
    try (FSDataInputStream in = fs.open(file.getPath())) {
      in.readFully(0, data);
    }
    try (ParquetFileReader reader = ParquetFileReader.open(new BytesFile(data))) {
      return reader.getRecordCount();
    }
  }

  /** A Parquet file held in memory. */
  private record BytesFile(byte[] data) implements InputFile {
    @Override
    public long getLength() {
      return data.length;
    }

    @Override
    public SeekableInputStream newStream() {
      Seekable in = new Seekable(data);
      return new DelegatingSeekableInputStream(in) {
        @Override
        public long getPos() {
          return in.position();
        }

        @Override
        public void seek(long newPos) {
          in.seek(newPos);
        }
      };
    }
  }

  private static final class Seekable extends ByteArrayInputStream {
    Seekable(byte[] data) {
      super(data);
    }

    long position() {
      return pos;
    }

    void seek(long position) {
      pos = (int) position;
    }
  }
}
