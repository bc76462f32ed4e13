// Package watchtest provides MemWatcher, an in-memory watch.Watcher with
// exact relevance (fixed scripts, or scripts derived on demand behind a gap
// limit), for tests of the node and of anything that drives one.
package watchtest
