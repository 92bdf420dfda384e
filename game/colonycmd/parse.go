package colonycmd

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/lockstep"
)

// Help documents the lines Parse reads, and the queries a tool answers.
const Help = `commands (one per line):
  speed N                       set the game speed: 0 paused, 1 normal, 2 or 3 fast
  spawn THING MAP X Y [COUNT]   spawn a thing (a ThingDef name) on a map at a cell
  move MAP PAWN X Y             send a pawn to a cell (pawns MAP lists the pawn ids)
  pawns MAP                     list the pawns of a map
  maps                          list the maps
  players                       list who is in the session, with latency
  say TEXT                      chat to everyone (so does any line that is not a command)
  help                          this text`

// ErrNotCommand is a typed line whose first word names no command: it
// is chat.
var ErrNotCommand = errors.New("not a command")

// Parse turns one typed line into a command. It returns a nil command
// for lines that only read state (pawns, maps, players, help) or chat
// (say), ErrNotCommand for a line whose first word is no command, and an
// error naming the mistake.
func Parse(line string) (*lockstep.Command, error) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return nil, nil
	}
	switch f[0] {
	case "speed":
		return speed(f)
	case "spawn":
		return spawn(f)
	case "move":
		return move(f)
	case "pawns":
		if len(f) != 2 {
			return nil, errors.New("usage: pawns MAP")
		}
		_, err := nums(f[1:])
		return nil, err
	case "say":
		if len(f) == 1 {
			return nil, errors.New("usage: say TEXT")
		}
		return nil, nil
	case "maps", "players", "help":
		return nil, nil
	}
	return nil, ErrNotCommand
}

func speed(f []string) (*lockstep.Command, error) {
	if len(f) != 2 {
		return nil, errors.New("usage: speed N")
	}
	n, err := nums(f[1:])
	if err != nil {
		return nil, err
	}
	if n[0] < 0 || n[0] > lockstep.MaxSpeed {
		return nil, fmt.Errorf("speed must be 0 to %d", lockstep.MaxSpeed)
	}
	c := lockstep.SetSpeed(uint8(n[0]))
	return &c, nil
}

func spawn(f []string) (*lockstep.Command, error) {
	if len(f) != 5 && len(f) != 6 {
		return nil, errors.New("usage: spawn THING MAP X Y [COUNT]")
	}
	n, err := nums(f[2:])
	if err != nil {
		return nil, err
	}
	count := 1
	if len(n) == 4 {
		count = n[3]
	}
	c := colony.SpawnThing(int32(n[0]), f[1], n[1], n[2], count)
	return &c, nil
}

func move(f []string) (*lockstep.Command, error) {
	if len(f) != 5 {
		return nil, errors.New("usage: move MAP PAWN X Y")
	}
	n, err := nums(f[1:])
	if err != nil {
		return nil, err
	}
	c := colony.MovePawn(int32(n[0]), int32(n[1]), n[2], n[3])
	return &c, nil
}

// nums reads every argument as a number.
func nums(args []string) ([]int, error) {
	out := make([]int, len(args))
	for i, a := range args {
		n, err := strconv.Atoi(a)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", a)
		}
		out[i] = n
	}
	return out, nil
}
