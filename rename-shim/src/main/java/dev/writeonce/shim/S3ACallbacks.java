package dev.writeonce.shim;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import org.apache.hadoop.fs.BlockLocation;
import org.apache.hadoop.fs.ContentSummary;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FSDataOutputStreamBuilder;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.fs.impl.OpenFileParameters;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.util.Progressable;

/**
 * How the shim reaches S3A: S3A's own operations, for what is not the shim's, and its path
 * arithmetic. {@link RenameShimFileSystem} implements it over {@code super}; the shim never calls
 * the file system's public methods, so that every call enters exactly one {@link Operation}.
 */
interface S3ACallbacks {

  FileStatus getFileStatus(Path path) throws IOException;

  FileStatus[] listStatus(Path path) throws IOException;

  RemoteIterator<FileStatus> listStatusIterator(Path path) throws IOException;

  RemoteIterator<LocatedFileStatus> listFiles(Path path, boolean recursive) throws IOException;

  RemoteIterator<LocatedFileStatus> listLocatedStatus(Path path) throws IOException;

  ContentSummary getContentSummary(Path path) throws IOException;

  FSDataOutputStream create(
      Path path,
      FsPermission permission,
      boolean overwrite,
      int bufferSize,
      short replication,
      long blockSize,
      Progressable progress)
      throws IOException;

  FSDataOutputStream createNonRecursive(
      Path path,
      FsPermission permission,
      java.util.EnumSet<org.apache.hadoop.fs.CreateFlag> flags,
      int bufferSize,
      short replication,
      long blockSize,
      Progressable progress)
      throws IOException;

  /** S3A's builder, which creates its file when built, without calling {@link #create}. */
  @SuppressWarnings("rawtypes")
  FSDataOutputStreamBuilder createFile(Path path);

  void copyFromLocalFile(boolean delSrc, boolean overwrite, Path src, Path dst) throws IOException;

  boolean mkdirs(Path path, FsPermission permission) throws IOException;

  boolean rename(Path src, Path dst) throws IOException;

  boolean delete(Path path, boolean recursive) throws IOException;

  FSDataInputStream open(Path path, int bufferSize) throws IOException;

  CompletableFuture<FSDataInputStream> openFileWithOptions(Path path, OpenFileParameters parameters)
      throws IOException;

  /** The shim's own builder of a file under a temporary directory, which calls {@code create}. */
  @SuppressWarnings("rawtypes")
  FSDataOutputStreamBuilder ownCreateFile(Path path);

  Path qualify(Path path);

  String keyOf(Path path);

  Path pathOf(String key);

  long blockSize(Path path);

  BlockLocation[] blockLocations(FileStatus status, long start, long length) throws IOException;

  String user();

  /** The output stream over a writer, counted in the file system's statistics. */
  FSDataOutputStream stream(java.io.OutputStream out);
}
