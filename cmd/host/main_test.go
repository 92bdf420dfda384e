package main

import (
	"os"
	"regexp"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestServeReadsOnlyItsFlags checks that every flag serve reads by name is
// one serve defines: urfave/cli returns the zero value for an undefined
// name without complaint, which once silently dropped four settings.
func TestServeReadsOnlyItsFlags(t *testing.T) {
	defined := map[string]bool{}
	for _, f := range serveCommand().Flags {
		for _, n := range f.Names() {
			defined[n] = true
		}
	}
	read := regexp.MustCompile(`c\.(?:String|Int|Bool|Uint64|Float64|Duration|StringSlice)\("([a-z0-9-]+)"\)`)
	for _, file := range []string{"main.go", "saves.go"} {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range read.FindAllStringSubmatch(string(src), -1) {
			if !defined[m[1]] && !isOtherCommandFlag(m[1]) {
				t.Errorf("%s reads flag --%s, which serve does not define", file, m[1])
			}
		}
	}
}

// isOtherCommandFlag names flags that other subcommands define and read.
func isOtherCommandFlag(name string) bool {
	for _, cmd := range newApp().Commands {
		if cmd.Name == "serve" {
			continue
		}
		if hasFlag(cmd, name) {
			return true
		}
	}
	return false
}

func hasFlag(cmd *cli.Command, name string) bool {
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	for _, sub := range cmd.Subcommands {
		if hasFlag(sub, name) {
			return true
		}
	}
	return false
}
