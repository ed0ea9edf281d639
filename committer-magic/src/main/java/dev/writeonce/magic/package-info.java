/**
 * The magic committer: task output streamed as multipart parts to its final key while the task
 * writes, completed only by the job commit. Not written yet: the module builds empty.
 */
package dev.writeonce.magic;
