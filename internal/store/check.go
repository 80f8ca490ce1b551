package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// The bbolt file format (version 2) as far as checkFile reads it.
const (
	boltMagic          = 0xED0CDAED
	boltVersion        = 2
	pageHeaderSize     = 16 // id u64, flags u16, count u16, overflow u32
	elementSize        = 16 // branch: pos, ksize u32, pgid u64; leaf: flags, pos, ksize, vsize u32
	metaSize           = 64 // magic, version, pageSize, flags u32; root, sequence, freelist, pgid, txid, checksum u64
	bucketHeaderSize   = 16 // root pgid u64, sequence u64
	branchPageFlag     = 0x01
	leafPageFlag       = 0x02
	freelistPageFlag   = 0x10
	bucketLeafFlag     = 0x01
	noFreelist         = ^uint64(0)
	maxTreeDepth       = 64
	minPageSize        = 512
	maxPageSize        = 1 << 20
	freelistCountInPgs = 0xFFFF
)

var ne = binary.NativeEndian // bbolt writes its structures in memory order

// checkFile verifies the page structure of the bbolt file at path before
// bbolt reads it: bbolt trusts its pages, so a damaged page can make it
// read outside the file, loop for ever through a cycle of pages, or
// allocate without bound, none of which a recover can catch. It checks the
// meta pages as bbolt does (magic, version, checksum), that the file holds
// every page up to the high-water mark, that the freelist is in bounds and
// free of duplicates, and that every page reachable from the root bucket
// is in bounds, referenced once, not free, of the right type, with every
// element, key and value inside it. It does not check the order of keys:
// that makes results wrong, not reads unsafe.
//
// The caller must hold a lock that keeps writers out while it runs.
func checkFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	c := &checker{f: f, size: fi.Size(), seen: map[uint64]bool{}, free: map[uint64]bool{}}
	return c.run()
}

type checker struct {
	f        io.ReaderAt
	size     int64
	pageSize uint64
	hwm      uint64
	seen     map[uint64]bool
	free     map[uint64]bool
}

type boltMeta struct {
	pageSize uint64
	root     uint64
	freelist uint64
	pgid     uint64
	txid     uint64
}

// readMeta reads the meta page at off; ok is false when it is not valid.
func (c *checker) readMeta(off int64) (m boltMeta, ok bool) {
	var b [pageHeaderSize + metaSize]byte
	if off < 0 || off+int64(len(b)) > c.size {
		return m, false
	}
	if _, err := c.f.ReadAt(b[:], off); err != nil {
		return m, false
	}
	mb := b[pageHeaderSize:]
	if ne.Uint32(mb[0:]) != boltMagic || ne.Uint32(mb[4:]) != boltVersion {
		return m, false
	}
	h := fnv.New64a()
	h.Write(mb[:56])
	if h.Sum64() != ne.Uint64(mb[56:]) {
		return m, false
	}
	return boltMeta{
		pageSize: uint64(ne.Uint32(mb[8:])),
		root:     ne.Uint64(mb[16:]),
		freelist: ne.Uint64(mb[32:]),
		pgid:     ne.Uint64(mb[40:]),
		txid:     ne.Uint64(mb[48:]),
	}, true
}

func (c *checker) run() error {
	// Find the page size as bbolt does: from the first meta page, else
	// from the second at any power-of-two offset.
	m0, ok0 := c.readMeta(0)
	pageSize := m0.pageSize
	if !ok0 {
		for i := 0; i <= 14; i++ {
			pos := int64(1024) << i
			if pos >= c.size-1024 {
				break
			}
			if m1, ok := c.readMeta(pos); ok {
				pageSize = m1.pageSize
				ok0 = true
				break
			}
		}
		if !ok0 {
			return errors.New("invalid database")
		}
	}
	if pageSize < minPageSize || pageSize > maxPageSize || pageSize&(pageSize-1) != 0 {
		return fmt.Errorf("invalid page size %d", pageSize)
	}
	c.pageSize = pageSize

	// Pick the meta page bbolt uses: the valid one with the higher txid.
	m0, ok0 = c.readMeta(0)
	m1, ok1 := c.readMeta(int64(pageSize))
	var m boltMeta
	switch {
	case ok0 && ok1:
		m = m0
		if m1.txid > m0.txid {
			m = m1
		}
	case ok0:
		m = m0
	case ok1:
		m = m1
	default:
		return errors.New("invalid database")
	}
	if m.pageSize != pageSize {
		return fmt.Errorf("meta pages disagree on the page size (%d, %d)", pageSize, m.pageSize)
	}
	c.hwm = m.pgid
	if c.hwm < 3 || c.hwm > uint64(c.size)/pageSize {
		if c.hwm >= 3 {
			return fmt.Errorf("file is truncated: %d bytes, want %d pages of %d bytes", c.size, c.hwm, pageSize)
		}
		return fmt.Errorf("invalid high-water mark %d", c.hwm)
	}
	c.seen[0], c.seen[1] = true, true

	if m.freelist != noFreelist {
		if err := c.checkFreelist(m.freelist); err != nil {
			return err
		}
	}
	return c.walk(m.root, 0)
}

// readPage reads the page pgid with its overflow pages, and marks them seen.
func (c *checker) readPage(pgid uint64, wantFlags uint16) ([]byte, error) {
	if pgid < 2 || pgid >= c.hwm {
		return nil, fmt.Errorf("page %d: out of bounds (high-water mark %d)", pgid, c.hwm)
	}
	var h [pageHeaderSize]byte
	if _, err := c.f.ReadAt(h[:], int64(pgid*c.pageSize)); err != nil {
		return nil, fmt.Errorf("page %d: %w", pgid, err)
	}
	if id := ne.Uint64(h[0:]); id != pgid {
		return nil, fmt.Errorf("page %d: header says page %d", pgid, id)
	}
	flags := ne.Uint16(h[8:])
	if flags&wantFlags == 0 || flags&^(branchPageFlag|leafPageFlag|freelistPageFlag) != 0 || flags&(flags-1) != 0 {
		return nil, fmt.Errorf("page %d: unexpected page type %#x", pgid, flags)
	}
	overflow := uint64(ne.Uint32(h[12:]))
	if overflow >= c.hwm-pgid {
		return nil, fmt.Errorf("page %d: %d overflow pages run past the high-water mark %d", pgid, overflow, c.hwm)
	}
	for i := pgid; i <= pgid+overflow; i++ {
		if c.seen[i] {
			return nil, fmt.Errorf("page %d: referenced twice", i)
		}
		if c.free[i] {
			return nil, fmt.Errorf("page %d: in use and free", i)
		}
		c.seen[i] = true
	}
	b := make([]byte, (overflow+1)*c.pageSize)
	if _, err := c.f.ReadAt(b, int64(pgid*c.pageSize)); err != nil {
		return nil, fmt.Errorf("page %d: %w", pgid, err)
	}
	return b, nil
}

func (c *checker) checkFreelist(pgid uint64) error {
	b, err := c.readPage(pgid, freelistPageFlag)
	if err != nil {
		return fmt.Errorf("freelist: %w", err)
	}
	if ne.Uint16(b[8:]) != freelistPageFlag {
		return fmt.Errorf("freelist: page %d is not a freelist page", pgid)
	}
	idx, count := uint64(0), uint64(ne.Uint16(b[10:]))
	if count == freelistCountInPgs {
		idx, count = 1, ne.Uint64(b[pageHeaderSize:])
	}
	if count > uint64(len(b)-pageHeaderSize)/8-idx {
		return fmt.Errorf("freelist: page %d: %d ids do not fit", pgid, count)
	}
	for i := range count {
		id := ne.Uint64(b[pageHeaderSize+8*(idx+i):])
		if id < 2 || id >= c.hwm {
			return fmt.Errorf("freelist: page %d out of bounds (high-water mark %d)", id, c.hwm)
		}
		if c.free[id] || c.seen[id] {
			return fmt.Errorf("freelist: page %d listed twice or in use", id)
		}
		c.free[id] = true
	}
	return nil
}

// walk checks the tree of pages of a bucket whose root page is pgid.
func (c *checker) walk(pgid uint64, depth int) error {
	if depth > maxTreeDepth {
		return fmt.Errorf("page %d: tree deeper than %d", pgid, maxTreeDepth)
	}
	b, err := c.readPage(pgid, branchPageFlag|leafPageFlag)
	if err != nil {
		return err
	}
	return c.checkPage(pgid, b, depth, false)
}

// checkPage checks the elements of the branch or leaf page b (an inline
// page when inline is set) and walks down from it.
func (c *checker) checkPage(pgid uint64, b []byte, depth int, inline bool) error {
	if len(b) < pageHeaderSize {
		return fmt.Errorf("page %d: short inline page", pgid)
	}
	flags, count := ne.Uint16(b[8:]), uint64(ne.Uint16(b[10:]))
	if inline && flags != leafPageFlag {
		return fmt.Errorf("page %d: inline bucket page of type %#x", pgid, flags)
	}
	if count > uint64(len(b)-pageHeaderSize)/elementSize {
		return fmt.Errorf("page %d: %d elements do not fit", pgid, count)
	}
	size := uint64(len(b))
	for i := range count {
		off := pageHeaderSize + i*elementSize
		e := b[off : off+elementSize]
		switch flags {
		case branchPageFlag:
			pos, ksize, child := uint64(ne.Uint32(e[0:])), uint64(ne.Uint32(e[4:])), ne.Uint64(e[8:])
			if off+pos+ksize > size {
				return fmt.Errorf("page %d: element %d: key outside the page", pgid, i)
			}
			if err := c.walk(child, depth+1); err != nil {
				return err
			}
		case leafPageFlag:
			eflags := ne.Uint32(e[0:])
			pos, ksize, vsize := uint64(ne.Uint32(e[4:])), uint64(ne.Uint32(e[8:])), uint64(ne.Uint32(e[12:]))
			start := off + pos + ksize
			if start+vsize > size {
				return fmt.Errorf("page %d: element %d: key or value outside the page", pgid, i)
			}
			if eflags&bucketLeafFlag == 0 {
				continue
			}
			if inline {
				return fmt.Errorf("page %d: element %d: bucket inside an inline bucket", pgid, i)
			}
			v := b[start : start+vsize]
			if len(v) < bucketHeaderSize {
				return fmt.Errorf("page %d: element %d: short bucket header", pgid, i)
			}
			if root := ne.Uint64(v); root != 0 {
				if err := c.walk(root, depth+1); err != nil {
					return err
				}
				continue
			}
			if err := c.checkPage(pgid, v[bucketHeaderSize:], depth+1, true); err != nil {
				return err
			}
		}
	}
	if flags == branchPageFlag && count == 0 {
		return fmt.Errorf("page %d: empty branch page", pgid)
	}
	return nil
}
