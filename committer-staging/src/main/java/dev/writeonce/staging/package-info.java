/**
 * Staging committers (directory and partitioned): task output on local disk, uploaded as multipart
 * parts at task commit and completed only by the job commit. Not written yet: the module builds
 * empty.
 */
package dev.writeonce.staging;
