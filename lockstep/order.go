package lockstep

import (
	"cmp"
	"slices"
)

// SortCommands orders commands the way every machine applies them: by
// tick, then by the sequence number the host gave each within its tick.
// Per-map queues can therefore be merged back into exactly the host's
// order.
func SortCommands(cmds []Command) {
	slices.SortStableFunc(cmds, func(a, b Command) int {
		if c := cmp.Compare(a.Tick, b.Tick); c != 0 {
			return c
		}
		return cmp.Compare(a.Seq, b.Seq)
	})
}

// Queues holds the commands applied since the current join point, per map,
// in the order they were applied.
type Queues struct {
	byMap  map[int32][]Command
	counts int
}

// NewQueues returns empty queues.
func NewQueues() *Queues {
	return &Queues{byMap: make(map[int32][]Command)}
}

// Len is the number of queued commands.
func (q *Queues) Len() int { return q.counts }

// Append records an applied command.
func (q *Queues) Append(c Command) {
	q.byMap[c.MapID] = append(q.byMap[c.MapID], c)
	q.counts++
}

// Reset empties the queues for a new join point.
func (q *Queues) Reset() {
	clear(q.byMap)
	q.counts = 0
}

// Snapshot copies the queues, maps in ascending ID order. The command
// payloads are shared; commands are never modified after they are queued.
func (q *Queues) Snapshot() (ids []int32, cmds [][]Command) {
	for id := range q.byMap {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		cmds = append(cmds, slices.Clone(q.byMap[id]))
	}
	return ids, cmds
}
