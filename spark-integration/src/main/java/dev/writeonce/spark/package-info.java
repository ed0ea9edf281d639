/**
 * The Spark SQL commit protocol (spark.sql.sources.commitProtocolClass) that carries pending
 * uploads to the driver in task commit messages. Not written yet: the module builds empty.
 */
package dev.writeonce.spark;
