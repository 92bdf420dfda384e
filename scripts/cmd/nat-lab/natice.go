package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lockhost/lockhost/transport/coord"
	"github.com/lockhost/lockhost/transport/ice"
)

// The ICE check (step 6) runs the ICE transport alone (transport/ice,
// the library join +CODE and host serve --coordinator connect through)
// between every host site and every joiner site, with coturn for STUN
// and TURN and a signalling relay of the lab's own in place of the
// coordinator: it shows the network lets each pair connect by the path
// the matrix expects, whatever the tools do with it.
const (
	helperSignal  = "lab-ice-signal"
	helperICEHost = "lab-ice-host"
	helperICEJoin = "lab-ice-join"
	signalAddr    = probeAlt + ":443" // reachable from every site, the 443-only one too
	iceTimeout    = 15 * time.Second
)

// serveSignal pairs a "host ID" connection with a "join ID" one and
// copies bytes between them, until killed.
func serveSignal() error {
	ln, err := net.Listen("tcp4", signalAddr)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	waiting := map[string]net.Conn{}
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go func() {
			line, err := bufio.NewReaderSize(c, 16).ReadString('\n')
			_, id, ok := strings.Cut(strings.TrimSpace(line), " ")
			if err != nil || !ok {
				c.Close()
				return
			}
			mu.Lock()
			peer := waiting[id]
			if peer == nil {
				waiting[id] = c
			} else {
				delete(waiting, id)
			}
			mu.Unlock()
			if peer != nil {
				go func() { _, _ = io.Copy(peer, c); peer.Close() }()
				_, _ = io.Copy(c, peer)
				c.Close()
			}
		}()
	}
}

// streamSignaller carries blobs over a stream, each after its length.
type streamSignaller struct{ c net.Conn }

func (s streamSignaller) Send(_ context.Context, blob []byte) error {
	_, err := s.c.Write(binary.BigEndian.AppendUint32(nil, uint32(len(blob))))
	if err == nil {
		_, err = s.c.Write(blob)
	}
	return err
}

func (s streamSignaller) Recv(ctx context.Context) ([]byte, error) {
	if d, ok := ctx.Deadline(); ok {
		_ = s.c.SetReadDeadline(d)
	}
	var n [4]byte
	if _, err := io.ReadFull(s.c, n[:]); err != nil {
		return nil, err
	}
	l := binary.BigEndian.Uint32(n[:])
	if l > ice.DefaultMaxBlob {
		return nil, fmt.Errorf("a blob of %d bytes", l)
	}
	b := make([]byte, l)
	_, err := io.ReadFull(s.c, b)
	return b, err
}

// iceServers are coturn's URLs with TURN REST credentials made from the
// shared secret, as the coordinator hands them out.
func iceServers() []ice.Server {
	user, pass := coord.TURNCredentials([]byte(turnSecret), "lab", time.Now().Add(time.Hour))
	return []ice.Server{{URLs: turnURLs, Username: user, Credential: pass}}
}

// runICE is one side of an ICE check: it meets its peer at the signalling
// relay under id, connects, exchanges a line both ways and prints the
// path and the time the connection took.
func runICE(host bool, id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), iceTimeout+5*time.Second)
	defer cancel()
	sc, err := (&net.Dialer{}).DialContext(ctx, "tcp4", signalAddr)
	if err != nil {
		return err
	}
	defer sc.Close()
	role := "join"
	if host {
		role = "host"
	}
	if _, err := fmt.Fprintf(sc, "%s %s\n", role, id); err != nil {
		return err
	}
	cfg := ice.Config{Servers: iceServers(), Timeout: iceTimeout}
	t0 := time.Now()
	var conn net.Conn
	var path ice.Path
	if host {
		conn, path, err = ice.Accept(ctx, streamSignaller{sc}, cfg)
	} else {
		conn, path, err = ice.Dial(ctx, streamSignaller{sc}, cfg)
	}
	if err != nil {
		return err
	}
	defer conn.Close()
	took := time.Since(t0)
	if err := greet(conn, host); err != nil {
		return err
	}
	fmt.Printf("path %s connect %.3f\n", path, took.Seconds())
	return nil
}

// greet exchanges a line each way over conn: the joiner speaks first (as
// in the game's protocol), the host answers once it has read it, and the
// host waits a moment before its process ends (Close sends what was
// written in the background).
func greet(conn net.Conn, host bool) error {
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(conn)
	if !host {
		if _, err := fmt.Fprintln(conn, "hello from the joiner"); err != nil {
			return err
		}
	}
	line, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "hello from the ") {
		return errors.Join(errors.New("no greeting over the channel"), err)
	}
	if host {
		if _, err := fmt.Fprintln(conn, "hello from the host"); err != nil {
			return err
		}
		time.Sleep(time.Second)
	}
	return nil
}

// iceHelper runs the ICE check's helpers; ok says args named one.
func iceHelper(args []string) (ok bool, code int) {
	var err error
	switch args[0] {
	case helperSignal:
		err = serveSignal()
	case helperICEHost, helperICEJoin:
		err = runICE(args[0] == helperICEHost, args[1])
	default:
		return false, 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, args[0]+":", err)
		return true, 1
	}
	return true, 0
}

// iceParallel is how many ICE checks run at once.
const iceParallel = 8

var reICEOut = regexp.MustCompile(`path (\S+) connect (\S+)`)

// step6 runs the ICE check for every pair.
func (l *lab) step6() (string, error) {
	if err := l.natSetup(); err != nil {
		return "", err
	}
	if err := l.startInternet(); err != nil {
		return "", err
	}
	if l.nat.signal == nil {
		p, err := start("signalling relay", nsInet, false, nil, l.self, helperSignal, "-")
		if err != nil {
			return "", err
		}
		l.nat.signal = p
		if err := waitTCP(nsInet, signalAddr, p); err != nil {
			return "", err
		}
	}
	hosts, joiners := labSites()
	t0 := time.Now()
	results := eachPair(len(hosts), len(joiners), iceParallel, func(h, j int) pairResult {
		return l.icePair(hosts[h], joiners[j], fmt.Sprintf("%d-%d", h, j))
	})
	fmt.Printf("nat-lab:   %d ICE connections in %.1f s, %d at a time\n", len(results), time.Since(t0).Seconds(), iceParallel)
	// The goals for the time to connect are the tools' (step 7); here
	// the times are printed, the paths judged.
	return judgeMatrix(results, "connected over the ICE transport and exchanged a line both ways", false)
}

// icePair runs both sides of one ICE check.
func (l *lab) icePair(h, j site, id string) pairResult {
	r := pairResult{host: h, joiner: j, want: expectedPath(h.kind, j.kind)}
	env := []string{"SSL_CERT_FILE=" + l.nat.certFile}
	var hostOut string
	var hostErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		hostOut, hostErr = inWithinEnv(iceTimeout+10*time.Second, h.machine(), env, l.self, helperICEHost, id)
	}()
	joinOut, joinErr := inWithinEnv(iceTimeout+10*time.Second, j.machine(), env, l.self, helperICEJoin, id)
	if joinErr != nil && joinOut == "" {
		joinOut = fmt.Sprintf("(no answer within %v, though the ICE attempt's own bound is %v)", iceTimeout+10*time.Second, iceTimeout)
	}
	<-done
	jm, hm := reICEOut.FindStringSubmatch(joinOut), reICEOut.FindStringSubmatch(hostOut)
	if joinErr != nil || hostErr != nil || jm == nil || hm == nil {
		r.err = fmt.Errorf("joiner: %v %s; host: %v %s", joinErr, lastLines(joinOut, 1), hostErr, lastLines(hostOut, 1))
		return r
	}
	secs, err := strconv.ParseFloat(jm[2], 64)
	if err != nil {
		r.err = err
		return r
	}
	r.path, r.hostPath, r.connect = jm[1], hm[1], time.Duration(secs*float64(time.Second))
	return r
}

// inWithinEnv runs a command in namespace ns for at most d, with env
// added to the environment.
func inWithinEnv(d time.Duration, ns string, env []string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
