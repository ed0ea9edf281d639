/**
 * Hive on the rename shim: a hook that tells the shim how each statement will load its staged
 * files, and a check of the Hive settings that would read pending files or lose data.
 */
package dev.writeonce.hive;
