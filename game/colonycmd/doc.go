// Package colonycmd reads the colony's commands as a player types them
// ("speed 2", "spawn Steel 0 10 12 25", "move 0 3 40 41"), for every
// joining side that takes typed commands: the terminal join tool and the
// browser player. Parse builds the same lockstep.Command the colony's
// builders (colony.SpawnThing, colony.MovePawn, lockstep.SetSpeed) make;
// Help documents the lines.
package colonycmd
