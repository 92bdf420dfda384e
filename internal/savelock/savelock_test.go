package savelock

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestOneHolderAtATime(t *testing.T) {
	save := filepath.Join(t.TempDir(), "colony.lhsave")
	since := time.Date(2026, 11, 25, 1, 2, 3, 0, time.UTC)
	l, err := Acquire(save, since)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.SetAddr("127.0.0.1:30502"); err != nil {
		t.Fatal(err)
	}
	for what, err := range map[string]error{"Acquire": second(save), "Check": Check(save)} {
		var held *HeldError
		if !errors.As(err, &held) {
			t.Fatalf("%s of a held save: %v, want a HeldError", what, err)
		}
		msg := err.Error()
		for _, want := range []string{save, "127.0.0.1:30502", "since 2026-11-25 01:02:03", "process "} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: %q lacks %q", what, msg, want)
			}
		}
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := Check(save); err != nil {
		t.Fatalf("Check after Release: %v", err)
	}
	l2, err := Acquire(save, time.Now())
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	l2.Release()
}

func second(save string) error {
	l, err := Acquire(save, time.Now())
	if err == nil {
		l.Release()
	}
	return err
}

func TestCheckMakesNoLockFile(t *testing.T) {
	save := filepath.Join(t.TempDir(), "never.lhsave")
	if err := Check(save); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(Path(save)); len(m) != 0 {
		t.Fatalf("Check made %v", m)
	}
}
