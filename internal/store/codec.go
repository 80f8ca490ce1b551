package store

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
)

// The first byte of every value of the blobs bucket says how the rest is
// encoded.
const (
	// codecFlateV1: raw DEFLATE (RFC 1951) with the preset dictionary dictV1.
	codecFlateV1 = 1
)

// maxBlob bounds what one blob may decompress to, so that a damaged or
// hostile file cannot make a reader allocate without limit. Kubernetes
// objects are at most about 1.5 MiB (the etcd request limit).
const maxBlob = 64 << 20

// Compressors and decompressors are large; reuse them.
var (
	writers = sync.Pool{New: func() any {
		w, err := flate.NewWriterDict(nil, flate.BestCompression, []byte(dictV1))
		if err != nil {
			panic(err) // only for an invalid level
		}
		return w
	}}
	readers = sync.Pool{New: func() any {
		return flate.NewReaderDict(bytes.NewReader(nil), []byte(dictV1))
	}}
)

// compress encodes b as a blob value.
func compress(b []byte) []byte {
	var buf bytes.Buffer
	buf.Grow(len(b)/3 + 16)
	buf.WriteByte(codecFlateV1)
	w := writers.Get().(*flate.Writer)
	w.Reset(&buf)
	w.Write(b) // writes to a bytes.Buffer do not fail
	w.Close()
	writers.Put(w)
	return buf.Bytes()
}

// decompress decodes a blob value into a new slice.
func decompress(v []byte) ([]byte, error) {
	if len(v) == 0 {
		return nil, errors.New("empty blob")
	}
	if v[0] != codecFlateV1 {
		return nil, fmt.Errorf("unknown blob encoding %d", v[0])
	}
	r := readers.Get().(io.ReadCloser)
	defer readers.Put(r)
	if err := r.(flate.Resetter).Reset(bytes.NewReader(v[1:]), []byte(dictV1)); err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(r, maxBlob+1))
	if err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	if len(b) > maxBlob {
		return nil, fmt.Errorf("blob: larger than %d bytes", maxBlob)
	}
	return b, nil
}

// decoder reads the binary encodings of records and change lists. Its
// methods never panic: on malformed input they record an error, which err
// returns, and return zero values.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("malformed %s", what)
	}
	d.b = nil
}

func (d *decoder) byte(what string) byte {
	if len(d.b) < 1 {
		d.fail(what)
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint(what string) uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a number of items that each take at least min bytes, and
// fails when the rest of the input cannot hold that many.
func (d *decoder) count(what string, min int) int {
	n := d.uvarint(what)
	if n > uint64(len(d.b)/min) {
		d.fail(what)
		return 0
	}
	return int(n)
}

func (d *decoder) bytes(what string) []byte {
	n := d.uvarint(what)
	if n > uint64(len(d.b)) {
		d.fail(what)
		return nil
	}
	b := d.b[:n:n]
	d.b = d.b[n:]
	return b
}

func (d *decoder) string(what string) string { return string(d.bytes(what)) }

func (d *decoder) id(what string) ID {
	var id ID
	if len(d.b) < len(id) {
		d.fail(what)
		return ID{}
	}
	copy(id[:], d.b)
	d.b = d.b[len(id):]
	return id
}

// encoder builds the binary encodings that decoder reads.
type encoder struct{ b []byte }

func (e *encoder) byte(c byte)      { e.b = append(e.b, c) }
func (e *encoder) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) bytes(b []byte)   { e.uvarint(uint64(len(b))); e.b = append(e.b, b...) }
func (e *encoder) string(s string)  { e.uvarint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *encoder) id(id ID)         { e.b = append(e.b, id[:]...) }
