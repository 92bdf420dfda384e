package replay

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cespare/xxhash/v2"
	"github.com/lockhost/lockhost/internal/codec"
	"github.com/lockhost/lockhost/lockstep"
)

// Writer writes one segment. It is not safe for concurrent use: the host
// gives it to one goroutine of its own, never the session's.
type Writer struct {
	f    *os.File
	bw   *bufio.Writer
	size int64
	// head is the size of the prefix, header and start frames.
	head int64
	buf  []byte // a frame's data being laid out
	err  error  // the first write error; every later call returns it
	// from is the first tick the next commands frame covers.
	from uint64
}

// Create starts a segment at path: the header, then the save file at
// savePath copied in as the start frame. The file is created new; an
// existing one is an error.
func Create(path string, h Header, savePath string) (*Writer, error) {
	hb, err := codec.Encode(&h)
	if err != nil {
		return nil, fmt.Errorf("replay header: %w", err)
	}
	if len(hb) > MaxHeader {
		return nil, fmt.Errorf("replay header of %d bytes, over %d", len(hb), MaxHeader)
	}
	save, err := os.Open(savePath)
	if err != nil {
		return nil, fmt.Errorf("replay start: %w", err)
	}
	defer save.Close()
	st, err := save.Stat()
	if err != nil {
		return nil, fmt.Errorf("replay start: %w", err)
	}
	if st.Size() > MaxStart {
		return nil, fmt.Errorf("replay start: save of %d bytes, over %d", st.Size(), int64(MaxStart))
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	w := &Writer{f: f, bw: bufio.NewWriterSize(f, 64<<10), from: h.StartTick}
	prefix := append([]byte(Magic), 0, 0, 0, 0)
	binary.BigEndian.PutUint16(prefix[8:], FormatVersion)
	w.write(prefix)
	w.frame(KindHeader, hb)
	w.startFrame(save, st.Size())
	w.head = w.size
	if err := w.flush(); err != nil {
		_ = f.Close()
		_ = os.Remove(path)
		return nil, err
	}
	return w, nil
}

// write writes b unless an earlier write failed.
func (w *Writer) write(b []byte) {
	if w.err != nil {
		return
	}
	n, err := w.bw.Write(b)
	w.size += int64(n)
	if err != nil {
		w.err = fmt.Errorf("replay: %w", err)
	}
}

// frame writes one frame of data.
func (w *Writer) frame(k Kind, data []byte) {
	hdr := frameHead(k, uint32(len(data)), xxhash.Sum64(data))
	w.write(hdr[:])
	w.write(data)
}

// frameHead is a frame's header: its kind, the length of its data and
// the data's xxhash64.
func frameHead(k Kind, length uint32, sum uint64) [frameHeaderLen]byte {
	var hdr [frameHeaderLen]byte
	hdr[0] = byte(k)
	binary.BigEndian.PutUint32(hdr[1:], length)
	binary.BigEndian.PutUint64(hdr[5:], sum)
	return hdr
}

// startFrame streams the save file in as the start frame: its hash
// first, so it is read twice, never held whole.
func (w *Writer) startFrame(save *os.File, size int64) {
	if w.err != nil {
		return
	}
	sum := xxhash.New()
	if n, err := io.Copy(sum, save); err != nil || n != size {
		w.err = fmt.Errorf("replay start: read the save: %d of %d bytes: %v", n, size, err)
		return
	}
	if _, err := save.Seek(0, io.SeekStart); err != nil {
		w.err = fmt.Errorf("replay start: %w", err)
		return
	}
	hdr := frameHead(KindStart, uint32(size), sum.Sum64())
	w.write(hdr[:])
	if w.err != nil {
		return
	}
	n, err := io.Copy(w.bw, io.LimitReader(save, size))
	w.size += n
	if err != nil || n != size {
		w.err = fmt.Errorf("replay start: copy the save: %d of %d bytes: %v", n, size, err)
	}
}

// flush hands what is buffered to the file.
func (w *Writer) flush() error {
	if w.err == nil {
		if err := w.bw.Flush(); err != nil {
			w.err = fmt.Errorf("replay: %w", err)
		}
	}
	return w.err
}

// Commands writes the commands the host stamped since the last call,
// the session having stepped up to tick to, and flushes them to the
// file. speed is the session's speed when the frame is cut.
func (w *Writer) Commands(cmds []lockstep.Command, to uint64, speed uint8) error {
	if w.err != nil {
		return w.err
	}
	if to < w.from {
		return fmt.Errorf("replay: commands up to tick %d, before tick %d", to, w.from)
	}
	var err error
	w.buf, err = appendCommands(w.buf[:0], w.from, to, cmds, speed)
	if err != nil {
		return fmt.Errorf("replay: commands: %w", err)
	}
	if len(w.buf) > MaxCommandsFrame {
		return fmt.Errorf("replay: a commands frame of %d bytes, over %d", len(w.buf), MaxCommandsFrame)
	}
	w.frame(KindCommands, w.buf)
	w.from = to
	return w.flush()
}

// Checkpoint writes the host's hashes at a checkpoint.
func (w *Writer) Checkpoint(cp lockstep.Checkpoint) error {
	if len(cp.Maps) > lockstep.MaxMaps {
		return fmt.Errorf("replay: a checkpoint of %d maps", len(cp.Maps))
	}
	w.buf = appendCheckpoint(w.buf[:0], cp)
	w.frame(KindCheckpoint, w.buf)
	return w.flush()
}

// From is the first tick the next commands frame covers: the tick the
// last one was cut at, or the start's.
func (w *Writer) From() uint64 { return w.from }

// Size is how many bytes the segment holds so far.
func (w *Writer) Size() int64 { return w.size }

// Recorded is how many of those bytes come after the start: the
// commands and checkpoints.
func (w *Writer) Recorded() int64 { return w.size - w.head }

// Close writes the end frame (the session at tick, why EndStopped or
// EndRotated), syncs the file and closes it.
func (w *Writer) Close(tick uint64, why byte) error {
	w.frame(KindEnd, appendEnd(nil, tick, why))
	err := w.flush()
	if err == nil {
		err = w.f.Sync()
	}
	return errors.Join(err, w.f.Close())
}

// Abort closes the file as it stands, without an end frame: a reader
// sees a segment cut short.
func (w *Writer) Abort() error {
	return errors.Join(w.flush(), w.f.Close())
}
