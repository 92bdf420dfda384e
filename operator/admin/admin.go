package admin

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/lockhost/lockhost/host"
)

// Host is what the commands act on; *host.Server implements it.
type Host interface {
	Players() ([]host.AdminPlayer, error)
	Kick(by, name, reason string) (host.AdminPlayer, error)
	Ban(by, target string, d time.Duration, reason string) (host.Ban, []string, error)
	Unban(by, target string) ([]host.Ban, error)
	Bans() []host.Ban
	Say(by, text string) error
	SaveNow(by, name string) (host.SaveRecord, error)
	Pause(by string) error
	Resume(by string) (uint8, error)
	SetSpeed(by string, speed uint8) error
	Shutdown(by string, delay time.Duration) error
	ClearDeclaredDefs(by string) (int, error)
}

// Who ran a command, as logged: the console, an RCON client (Who + its
// address), or a Go program.
const (
	ByConsole = "console"
	ByRCON    = "rcon"
	ByAPI     = "api"
)

// MaxLine bounds one command line, in bytes; a longer one is refused.
const MaxLine = 1024

// Command is one admin command: its name, its arguments as shown in help,
// one line of help, and how it runs.
type Command struct {
	Name string
	Args string
	Help string
	// min and max bound the number of arguments (max -1: any number).
	min, max int
	run      func(h Host, by string, args []string, line string) (string, error)
}

// Commands is the command table.
var Commands = []Command{
	{Name: "players", Help: "list who is online: id, name, status, latency, address", run: players},
	{Name: "kick", Args: "NAME [reason]", Help: "disconnect a player, showing them the reason; they may join again", min: 1, max: -1, run: kick},
	{Name: "ban", Args: "NAME|IP [duration] [reason]", Help: "ban a username or an IP address (an IPv6 address: its /64) for a duration such as 30m, 12h or 7d, or for good; whoever it covers is disconnected, and joins and rejoins are refused", min: 1, max: -1, run: ban},
	{Name: "unban", Args: "NAME|IP", Help: "lift a ban", min: 1, max: 1, run: unban},
	{Name: "bans", Help: "list the bans in force", run: bans},
	{Name: "say", Args: "TEXT", Help: "show a message to every player", min: 1, max: -1, run: say},
	{Name: "save", Args: "[NAME]", Help: "save the session now, to the host's save file or to NAME.lhsave beside it (a plain name, never a path; a file there that is not a save is never replaced)", max: 1, run: save},
	{Name: "pause", Help: "stop the game's time", run: pause},
	{Name: "resume", Help: "restart the game's time at the speed it had", run: resume},
	{Name: "speed", Args: "N", Help: "set the game speed: 0 (paused) to 3", min: 1, max: 1, run: speed},
	{Name: "shutdown", Args: "[delay]", Help: "stop the host after a delay such as 30s (at once without one): players are told, the final save is written", max: 1, run: shutdown},
	{Name: "cleardefs", Help: "relay host with defs from the arbiter: drop the def databases the arbiter declared (a wrong or hostile declaration); the next arbiter admitted declares them again, and until then only arbiters are admitted", run: clearDefs},
	{Name: "help", Args: "[command]", Help: "list the commands, or explain one", max: 1, run: nil},
}

// Exec runs one command line for by against h and returns what to show:
// the command's output, or one line starting "error: ". It never panics
// on any input.
func Exec(h Host, by, line string) string {
	out, err := run(h, by, line)
	if err != nil {
		return "error: " + err.Error()
	}
	return out
}

func run(h Host, by, line string) (string, error) {
	if len(line) > MaxLine {
		return "", fmt.Errorf("command line over %d bytes", MaxLine)
	}
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return "", fmt.Errorf("no command; type help")
	}
	name, args := strings.ToLower(fields[0]), fields[1:]
	if name == "help" {
		return help(args)
	}
	c := find(name)
	if c == nil {
		return "", fmt.Errorf("unknown command %q; type help", fields[0])
	}
	if len(args) < c.min || c.max >= 0 && len(args) > c.max {
		return "", fmt.Errorf("usage: %s", usage(c))
	}
	return c.run(h, by, args, line)
}

func find(name string) *Command {
	for i := range Commands {
		if Commands[i].Name == name {
			return &Commands[i]
		}
	}
	return nil
}

func usage(c *Command) string {
	if c.Args == "" {
		return c.Name
	}
	return c.Name + " " + c.Args
}

func help(args []string) (string, error) {
	if len(args) == 1 {
		c := find(strings.ToLower(args[0]))
		if c == nil {
			return "", fmt.Errorf("unknown command %q; type help", args[0])
		}
		return usage(c) + "\n  " + c.Help, nil
	}
	var b strings.Builder
	b.WriteString("commands:\n")
	for i := range Commands {
		fmt.Fprintf(&b, "  %-32s %s\n", usage(&Commands[i]), Commands[i].Help)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// rest is line after its first n fields, trimmed.
func rest(line string, n int) string {
	s := strings.TrimSpace(line)
	for range n {
		i := strings.IndexFunc(s, func(r rune) bool { return r == ' ' || r == '\t' })
		if i < 0 {
			return ""
		}
		s = strings.TrimSpace(s[i:])
	}
	return s
}

func players(h Host, _ string, _ []string, _ string) (string, error) {
	list, err := h.Players()
	if err != nil {
		return "", err
	}
	if len(list) == 0 {
		return "no players online", nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d online:\n", len(list))
	for _, p := range list {
		status := p.Status
		if p.Spectator {
			status += " (spectator)"
		}
		fmt.Fprintf(&b, "  %4d  %-15s  %-22s  %5dms  %s\n", p.ID, p.Name, status, p.Latency.Milliseconds(), p.Addr)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func kick(h Host, by string, args []string, line string) (string, error) {
	p, err := h.Kick(by, args[0], rest(line, 2))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("kicked %s (player %d)", p.Name, p.ID), nil
}

// ParseDuration reads a ban or shutdown duration: Go's form (90s, 30m,
// 1h30m) or a number of days (7d).
func ParseDuration(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseUint(days, 10, 16)
		if err != nil || n == 0 {
			return 0, fmt.Errorf("duration %q: give a whole number of days, such as 7d", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("duration %q: give one such as 30s, 30m, 12h or 7d", s)
	}
	return d, nil
}

// looksLikeDuration tells a duration argument from the first word of a
// reason: it starts with a digit.
func looksLikeDuration(s string) bool { return s != "" && s[0] >= '0' && s[0] <= '9' }

func ban(h Host, by string, args []string, line string) (string, error) {
	var d time.Duration
	reason := rest(line, 2)
	if len(args) > 1 && looksLikeDuration(args[1]) {
		var err error
		if d, err = ParseDuration(args[1]); err != nil {
			return "", err
		}
		reason = rest(line, 3)
	}
	b, kicked, err := h.Ban(by, args[0], d, reason)
	if err != nil {
		return "", err
	}
	out := "banned " + describeBan(b)
	if len(kicked) > 0 {
		out += "; disconnected " + strings.Join(kicked, ", ")
	}
	return out, nil
}

func describeBan(b host.Ban) string {
	s := b.Target()
	if b.Until.IsZero() {
		s += " for good"
	} else {
		s += " until " + b.Until.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	if b.Reason != "" {
		s += " (" + b.Reason + ")"
	}
	return s
}

func unban(h Host, by string, args []string, _ string) (string, error) {
	if _, err := h.Unban(by, args[0]); err != nil {
		return "", err
	}
	return "unbanned " + args[0], nil
}

func bans(h Host, _ string, _ []string, _ string) (string, error) {
	list := h.Bans()
	if len(list) == 0 {
		return "no bans", nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d banned:\n", len(list))
	for _, ban := range list {
		fmt.Fprintf(&b, "  %s, by %s at %s\n", describeBan(ban), ban.By, ban.At.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func say(h Host, by string, _ []string, line string) (string, error) {
	text := rest(line, 1)
	if err := h.Say(by, text); err != nil {
		return "", err
	}
	return "said: " + text, nil
}

func save(h Host, by string, args []string, _ string) (string, error) {
	name := ""
	if len(args) == 1 {
		name = args[0]
	}
	rec, err := h.SaveNow(by, name)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("saved %s at tick %d (%d bytes)", rec.Path, rec.Tick, rec.Bytes), nil
}

func pause(h Host, by string, _ []string, _ string) (string, error) {
	if err := h.Pause(by); err != nil {
		return "", err
	}
	return "paused", nil
}

func resume(h Host, by string, _ []string, _ string) (string, error) {
	s, err := h.Resume(by)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("resumed at speed %d", s), nil
}

func speed(h Host, by string, args []string, _ string) (string, error) {
	n, err := strconv.ParseUint(args[0], 10, 8)
	if err != nil {
		return "", fmt.Errorf("speed %q: give a number from 0 to 3", args[0])
	}
	if err := h.SetSpeed(by, uint8(n)); err != nil {
		return "", err
	}
	return fmt.Sprintf("speed set to %d", n), nil
}

func shutdown(h Host, by string, args []string, _ string) (string, error) {
	var d time.Duration
	if len(args) == 1 {
		var err error
		if d, err = ParseDuration(args[0]); err != nil {
			return "", err
		}
	}
	if err := h.Shutdown(by, d); err != nil {
		return "", err
	}
	if d == 0 {
		return "shutting down", nil
	}
	return fmt.Sprintf("shutting down in %v", d), nil
}

func clearDefs(h Host, by string, _ []string, _ string) (string, error) {
	n, err := h.ClearDeclaredDefs(by)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("cleared the declaration of %d def databases; the next arbiter admitted declares them", n), nil
}

// RunConsole reads command lines from in until it ends or ctx is done,
// runs each for by, and writes each result to out, one or more lines.
// Blank lines are skipped; a line over MaxLine bytes is refused (and read
// no further than that into memory).
func RunConsole(ctx context.Context, h Host, by string, in io.Reader, out io.Writer) error {
	lines := make(chan string)
	errc := make(chan error, 1)
	go func() {
		defer close(lines)
		r := bufio.NewReaderSize(in, MaxLine+1)
		for {
			line, err := readLine(r)
			if err != nil {
				if err != io.EOF {
					errc <- err
				}
				return
			}
			select {
			case lines <- line:
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case line, ok := <-lines:
			if !ok {
				select {
				case err := <-errc:
					return fmt.Errorf("console: %w", err)
				default:
					return nil
				}
			}
			if strings.TrimSpace(line) == "" {
				continue
			}
			if _, err := fmt.Fprintln(out, Exec(h, by, line)); err != nil {
				return fmt.Errorf("console: %w", err)
			}
		}
	}
}

// readLine reads one line without its end; a line longer than the
// reader's buffer is skipped to its end and returned cut, over MaxLine, so
// Exec refuses it.
func readLine(r *bufio.Reader) (string, error) {
	b, err := r.ReadSlice('\n')
	switch {
	case err == bufio.ErrBufferFull:
		long := string(b)
		for err == bufio.ErrBufferFull {
			_, err = r.ReadSlice('\n')
		}
		if err != nil && err != io.EOF {
			return "", err
		}
		return long, nil
	case err == io.EOF && len(b) > 0:
		return strings.TrimRight(string(b), "\r\n"), nil
	case err != nil:
		return "", err
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}
