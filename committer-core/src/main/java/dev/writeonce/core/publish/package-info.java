/**
 * Metastore publish mode, shared by the engines: a statement completes its files into a generation
 * of the table named by its run, then one metastore call makes it the table's data; superseded
 * generations are removed after a grace period. {@link dev.writeonce.core.publish.Publication}
 * holds the steps, {@link dev.writeonce.core.publish.MetastoreTable} is what an engine's catalog
 * provides.
 */
package dev.writeonce.core.publish;
