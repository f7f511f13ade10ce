package ltv

import (
	"fmt"
	"strings"
)

// Level is a PAdES baseline level (ETSI EN 319 142-1 6): B-B a signature, B-T with a
// signature timestamp, B-LT with validation data in a DSS, B-LTA with an archive document
// timestamp over it. The zero value is no level (not sealed).
type Level int

// The levels, in order.
const (
	LevelNone Level = iota
	LevelB
	LevelT
	LevelLT
	LevelLTA
)

var levelNames = [...]string{"", "B-B", "B-T", "B-LT", "B-LTA"}

func (l Level) String() string {
	if l < 0 || int(l) >= len(levelNames) {
		return fmt.Sprintf("Level(%d)", int(l))
	}
	return levelNames[l]
}

// ParseLevel reads "B-B", "B-T", "B-LT" or "B-LTA" (case-insensitive).
func ParseLevel(s string) (Level, error) {
	for i, n := range levelNames {
		if i > 0 && strings.EqualFold(s, n) {
			return Level(i), nil
		}
	}
	return LevelNone, fmt.Errorf("want one of B-B, B-T, B-LT, B-LTA, not %q", s)
}
