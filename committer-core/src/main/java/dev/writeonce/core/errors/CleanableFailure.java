package dev.writeonce.core.errors;

/**
 * Marks a failure that leaves the job before its commit point and that no retry of the same commit
 * can mend (the job is refused: a task is missing, a manifest is damaged, the destination is
 * taken). After it, aborting the job's uploads loses nothing; an adapter writes {@code if (e
 * instanceof CleanableFailure) abort(...)} once, instead of knowing each such exception.
 */
public interface CleanableFailure {}
