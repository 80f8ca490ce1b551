// Package store is snapply's content-addressed store: one bbolt file
// (snapply.db by default) that holds many snapshots of a cluster, each
// object once. It is the only package that imports bbolt.
//
// # Using it
//
// The store is shaped like bbolt. Open a file, read in View and write in
// Update closures, and Close it:
//
//	db, err := store.Open("snapply.db", store.DefaultOptions())
//	...
//	defer db.Close()
//	err = db.View(func(tx *store.Tx) error {
//		s, err := tx.Snapshot("latest")
//		...
//	})
//
// A Tx is valid only inside its closure, and so is every []byte obtained
// through it: such slices may point into the memory-mapped file, which
// bbolt reuses and unmaps once the transaction ends. Copy them to keep
// them. The decoded values that Tx methods return (Meta, *Snapshot,
// *unstructured.Unstructured) are copies and stay valid. The DB methods of
// the same names each run one transaction.
//
// # Identity
//
// An object's ID is the Merkle SHA-256 of its normalised tree (see Hash and
// Normalize): the resourceVersion goes into the snapshot entry instead, and
// a Secret's values are replaced by digests keyed with the store's own
// random key (DB.Redactor). Secret values never reach the file in clear
// (with a store key they are kept sealed, see Unsealed); but as the
// key lives in the same file, whoever holds the file can test a guess of a
// value against its digest. Digests only show which keys changed.
//
// # Layout
//
// Buckets:
//
//	meta       "schema": "1"; "redaction-key": 32 random bytes;
//	           "created-by": the snapply version that created the file;
//	           "created": when (RFC 3339)
//	objects    object ID (32 bytes) -> uvarint sequence number of its blob
//	blobs      sequence number (8 bytes, big-endian) -> one byte of codec
//	           (1: raw DEFLATE with the preset dictionary in dict.go), then
//	           the compressed canonical JSON of an object (keys sorted, no
//	           HTML escaping), or a part of a snapshot's entries
//	snapshots  snapshot ID -> record: metadata (JSON), then the entries as
//	           a keyframe or a delta (see below)
//	records    the record of each apply (see Run)
//	sealed     with a store key only: the clear values of Secrets, sealed
//	           with AES-256-GCM, by object ID (see Unsealed and seal.go)
//
// Objects are kept in the blobs bucket, under sequence numbers, rather than
// under their IDs, because of how a B-tree fills: new keys at random places
// (hashes) split full pages in halves, so that a few changed objects per
// snapshot would soon leave every page of a large objects bucket half
// empty, nearly doubling the file. Blobs are appended at the end of their
// bucket and fill whole pages; only the index in the objects bucket, 50
// bytes an object, takes keys at random places.
//
// # Snapshot entries: keyframes and deltas
//
// A snapshot's entries (ref, object ID, resourceVersion of every object)
// take about 45 bytes an object compressed, mostly the incompressible IDs:
// storing them whole in every snapshot would cost more than the objects
// that changed. So a snapshot is stored either as a keyframe, its whole
// list of entries, or as a delta: the entries added or changed, and the
// refs removed, against a base snapshot. PutSnapshot tries the four newest
// snapshots as bases and writes a delta against the one that gives the
// smallest, when that is smaller than a keyframe, the chain from the
// keyframe stays under 256 deltas, and rebuilding the entries reads at
// most twice the bytes of a keyframe; otherwise it writes a keyframe. So
// reading a snapshot costs at most twice reading a keyframe, and a
// snapshot of an unchanged cluster costs only its metadata. Entries are
// cut into parts of 64, each compressed on its own; a part under 1 KiB is
// kept in the record (2 KiB at most per record), a larger one in a blob.
//
// Snapshots depend on their bases: a future command that deletes
// snapshots must first rewrite the snapshots based on them (as keyframes,
// for instance).
//
// # Size and safety
//
// A snapshot is written in one bbolt transaction: after a crash, or when
// its context is cancelled, the file holds it whole or not at all. bbolt
// grows a file in large steps; Close cuts a writable file back to the
// pages in use (bbolt's high-water mark), so that the file's size follows
// what it holds.
//
// bbolt trusts its pages: a damaged one can make it read outside the file,
// loop through a cycle of pages, or allocate without bound, which no
// recover catches. So Open first checks, under a shared lock, the structure
// of every page of an existing file (meta pages, freelist, every page
// reachable from the root bucket: bounds, types, no page used twice), and
// refuses a damaged file with a one-line error wrapping ErrCorrupt; panics
// inside transactions are returned as such errors too; the decoders of
// this package bound what they allocate by the size of their input; and
// Object checks that what it read hashes to the ID asked for.
//
// # Encrypted files
//
// With Options.FileKey the file on disk is encrypted as a whole (see
// fileenc.go): a plain header line naming the key's ID, then an age file.
// Open decrypts it into a private temporary directory (0700, the file
// 0600) and locks the encrypted file meanwhile; Close writes the plain
// copy back encrypted, when it was opened for writing and changed, through
// a synced temporary file renamed over the old one, and removes the copy
// in every case. EncryptStore, DecryptStore and RekeyStore convert a file
// in place.
package store
