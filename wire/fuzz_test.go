package wire

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/lockhost/lockhost/testing/testkit"
)

// fuzzFrameLimit is small so the fuzzer meets the limit often.
const fuzzFrameLimit = 1024

func FuzzFrameReader(f *testing.F) {
	stream, ends := sampleStream(f)
	f.Add(stream)
	for _, e := range ends {
		f.Add(stream[:e])
		f.Add(stream[:e-1])
	}
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{0, 0, 4, 1, 0})          // one over the limit
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}) // huge
	f.Fuzz(func(t *testing.T, in []byte) {
		cr := &testkit.CountingReader{R: bytes.NewReader(in)}
		fr := NewFrameReader(cr, fuzzFrameLimit)
		consumed := 0
		for {
			id, body, err := fr.Next()
			if err != nil {
				switch {
				case err == io.EOF:
					if consumed != len(in) {
						t.Fatalf("io.EOF after %d of %d bytes", consumed, len(in))
					}
				case err == io.ErrUnexpectedEOF:
					if consumed == len(in) {
						t.Fatal("io.ErrUnexpectedEOF at a frame boundary")
					}
				case errors.Is(err, ErrFrameTooLarge), errors.Is(err, ErrEmptyFrame):
					if cr.N != consumed+frameHeader {
						t.Fatalf("%v after reading %d bytes of the frame", err, cr.N-consumed)
					}
				default:
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if len(body)+1 > fuzzFrameLimit {
				t.Fatalf("frame of %d bytes over the limit %d", len(body)+1, fuzzFrameLimit)
			}
			consumed += frameHeader + 1 + len(body)
			if cr.N != consumed {
				t.Fatalf("read %d bytes, frames account for %d", cr.N, consumed)
			}
			if !bytes.Equal(in[consumed-len(body):consumed], body) || in[consumed-len(body)-1] != byte(id) {
				t.Fatal("frame does not hold the stream's bytes")
			}
			// Decoding arbitrary frames must not panic either.
			_, _ = Decode(id, body)
		}
	})
}

func FuzzDecode(f *testing.F) {
	for _, p := range append(samplePackets(), sectionExamples()...) {
		frame := MustMarshal(p)
		f.Add(byte(p.ID()), frame[5:])
		f.Add(byte(p.ID()), frame[5:len(frame)-1])
	}
	f.Add(byte(IDServerTick), []byte{0xc0})
	f.Add(byte(99), []byte{0x80})
	f.Fuzz(func(t *testing.T, id byte, body []byte) {
		orig := bytes.Clone(body)
		p, err := Decode(ID(id), body)
		if !bytes.Equal(orig, body) {
			t.Fatal("Decode modified its input")
		}
		if err != nil {
			if p != nil {
				t.Fatalf("Decode returned a packet with error %v", err)
			}
			return
		}
		if p.ID() != ID(id) {
			t.Fatalf("decoded %s from id %d", p.ID(), id)
		}
		frame, err := Marshal(nil, p)
		if err != nil {
			t.Fatalf("re-Marshal of a decoded packet: %v", err)
		}
		fr := NewFrameReader(bytes.NewReader(frame), len(frame))
		id2, body2, err := fr.Next()
		if err != nil {
			t.Fatalf("re-read: %v", err)
		}
		q, err := Decode(id2, body2)
		if err != nil {
			t.Fatalf("re-Decode of %#v: %v", p, err)
		}
		// What a decoded packet says is what it encodes to: an empty and
		// an absent list (omitempty) decode to an empty and a nil slice,
		// which encode alike and are alike to every reader.
		again, err := Marshal(nil, q)
		if err != nil {
			t.Fatalf("re-Marshal of %#v: %v", q, err)
		}
		if !bytes.Equal(frame, again) {
			t.Fatalf("round trip differs:\n first %#v\nsecond %#v", p, q)
		}
	})
}
