/**
 * A FileSystem for s3a:// under which rename-based commit code writes every byte once: files under
 * temporary paths become multipart uploads to their predicted final keys, and renames complete
 * them. Not written yet: the module builds empty.
 */
package dev.writeonce.shim;
