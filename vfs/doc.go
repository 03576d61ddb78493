// Package vfs is the file-system seam of Strata's storage code: every file
// operation of the WAL, the manifest and (later) segment files goes
// through an FS, so tests can crash the "machine" and inject I/O faults.
//
// Implementations:
//
//   - Default: the operating system (os package; flock(2) for Lock).
//   - NewCrashableMem: an in-memory FS that tracks what is durable and can
//     CrashClone itself into the state a disk would hold after power loss.
//     File data is durable up to the last File.Sync; directory entries
//     (create, rename, remove, mkdir) are durable only once the parent
//     directory was synced through OpenDir(...).Sync(). CrashCloneWith can
//     also keep none, a random prefix, or all of each file's unsynced tail
//     to model torn writes. This follows the strict mode of pebble's MemFS
//     (cockroachdb/pebble vfs/mem_fs.go, NewCrashableMem/CrashClone); the
//     code here is written from that description, not copied.
//   - package errorfs: a wrapper that fails chosen operations through a
//     two-method Injector (String, MaybeError), as in pebble vfs/errorfs.
//
// Helpers: SyncDir, MkdirAllDurable, WriteFileAtomic (temp file → fsync →
// rename → fsync directory, as in Tantivy's mmap_directory atomic write).
package vfs
