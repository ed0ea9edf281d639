package dev.writeonce.core.upload;

import java.io.IOException;
import java.util.EnumSet;
import java.util.Set;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FSDataOutputStreamBuilder;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.PathIOException;

/**
 * The builder of {@link FileSystem#createFile} for paths whose files a subclass of S3A writes
 * itself. S3A's own builder creates its files without calling {@code create}, so a subclass that
 * overrides {@code create} would be bypassed; this one calls the filesystem's public {@code create}
 * (or {@code createNonRecursive}, or {@code append}) with every option the caller set, so the
 * overrides apply.
 *
 * <p>It starts as S3A's builder does, with {@code create().overwrite(true)}. Mandatory options are
 * accepted only where the writer behind these paths honours them (see {@link #HONOURED_KEYS});
 * others, such as S3A's headers or a conditional create, are refused rather than silently dropped.
 */
public final class OwnCreateFileBuilder
    extends FSDataOutputStreamBuilder<FSDataOutputStream, OwnCreateFileBuilder> {

  /**
   * Mandatory options these writers satisfy as they are: they never check the path (as with {@code
   * fs.s3a.create.performance}), always upload in parts, and make nothing visible before close.
   */
  public static final Set<String> HONOURED_KEYS =
      Set.of("fs.s3a.create.performance", "fs.s3a.create.multipart", "fs.option.create.in.close");

  private final String writer;

  /**
   * @param writer what writes files at this path, for error messages: "the rename shim"
   */
  public OwnCreateFileBuilder(FileSystem fileSystem, Path path, String writer) {
    super(fileSystem, path);
    this.writer = writer;
    create().overwrite(true);
  }

  @Override
  public OwnCreateFileBuilder getThisBuilder() {
    return this;
  }

  @Override
  public FSDataOutputStream build() throws IOException {
    rejectUnknownMandatoryKeys(
        HONOURED_KEYS,
        " for " + getPath() + ": " + writer + " writes this path and cannot honour the option");
    EnumSet<CreateFlag> flags = getFlags();
    // Before create: the builder starts with create(), and an append must never overwrite.
    if (flags.contains(CreateFlag.APPEND)) {
      return getFS().append(getPath(), getBufferSize(), getProgress());
    }
    if (flags.contains(CreateFlag.CREATE) || flags.contains(CreateFlag.OVERWRITE)) {
      if (isRecursive()) {
        return getFS()
            .create(
                getPath(),
                getPermission(),
                flags,
                getBufferSize(),
                getReplication(),
                getBlockSize(),
                getProgress(),
                getChecksumOpt());
      }
      return getFS()
          .createNonRecursive(
              getPath(),
              getPermission(),
              flags,
              getBufferSize(),
              getReplication(),
              getBlockSize(),
              getProgress());
    }
    throw new PathIOException(
        getPath().toString(), "set create(), overwrite(boolean) or append() before build()");
  }
}
