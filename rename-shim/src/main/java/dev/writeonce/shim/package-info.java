/**
 * A FileSystem for s3a:// under which rename-based commit code writes every byte once: files under
 * temporary paths become multipart uploads to their predicted final keys, and renames complete
 * them. {@link dev.writeonce.shim.RenameShimFileSystem} holds the S3A overrides; records, renames,
 * deletes, statuses and misses each have a class of their own.
 */
package dev.writeonce.shim;
