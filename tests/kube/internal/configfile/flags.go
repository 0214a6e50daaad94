package configfile

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// Kind is the type of a command-line flag, as urfave/cli knows them.
type Kind int

const (
	String Kind = iota
	Bool
	Slice
	Int
	Duration
)

// Flag describes one urfave/cli style flag. Name may carry aliases after
// commas ("data-dir,d"); the first name is the canonical one.
type Flag struct {
	Name    string
	Kind    Kind
	EnvVar  string
	Default string
}

// Names returns the flag's names, canonical first.
func (f Flag) Names() []string {
	var out []string
	for _, n := range strings.Split(f.Name, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// Canonical returns the flag's first name.
func (f Flag) Canonical() string { return f.Names()[0] }

// Values holds a parsed command line, keyed by canonical flag name.
type Values struct {
	Strings map[string]string
	Bools   map[string]bool
	Slices  map[string][]string
	// Set: flags given on the command line (or the files' flags inserted
	// into it); FromEnv: flags whose value came from their environment var.
	Set     map[string]bool
	FromEnv map[string]bool
	Args    []string // positional arguments left after the flags
}

// String returns a string/int/duration flag's value ("" if unknown).
func (v *Values) String(name string) string { return v.Strings[name] }

// Bool returns a bool flag's value.
func (v *Values) Bool(name string) bool { return v.Bools[name] }

// Slice returns a repeatable flag's values in order.
func (v *Values) Slice(name string) []string { return v.Slices[name] }

type strVal struct {
	v    *Values
	name string
	kind Kind
}

func (s *strVal) String() string { return "" }
func (s *strVal) Set(x string) error {
	switch s.kind {
	case Int:
		if _, err := strconv.ParseInt(x, 0, 64); err != nil {
			return errors.New("parse error")
		}
	case Duration:
		if _, err := time.ParseDuration(x); err != nil {
			return errors.New("parse error")
		}
	}
	s.v.Strings[s.name] = x
	return nil
}

type boolVal struct {
	v    *Values
	name string
}

func (b *boolVal) String() string   { return "" }
func (b *boolVal) IsBoolFlag() bool { return true }
func (b *boolVal) Set(x string) error {
	p, err := strconv.ParseBool(x)
	if err != nil {
		return errors.New("parse error")
	}
	b.v.Bools[b.name] = p
	return nil
}

type sliceVal struct {
	v       *Values
	name    string
	fromEnv bool
}

func (s *sliceVal) String() string { return "" }
func (s *sliceVal) Set(x string) error {
	s.v.Slices[s.name] = append(s.v.Slices[s.name], x)
	return nil
}

// Parse parses args (the part after the subcommand) against defs with Go's
// flag package, which is what urfave/cli v1 (k3s's CLI library) uses: both
// "--f=v" and "--f v", single or double dash, bools without a value, repeated
// slice flags accumulating in order, and "flag provided but not defined: -x"
// for an unknown flag. Environment variables fill flags not given.
func Parse(defs []Flag, args []string) (*Values, error) {
	v := &Values{
		Strings: map[string]string{},
		Bools:   map[string]bool{},
		Slices:  map[string][]string{},
		Set:     map[string]bool{},
		FromEnv: map[string]bool{},
	}
	fs := flag.NewFlagSet("k3s", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	canon := map[string]string{}
	for _, d := range defs {
		name := d.Canonical()
		var fv flag.Value
		switch d.Kind {
		case Bool:
			fv = &boolVal{v: v, name: name}
			if d.Default != "" {
				b, _ := strconv.ParseBool(d.Default)
				v.Bools[name] = b
			}
		case Slice:
			fv = &sliceVal{v: v, name: name}
		default:
			fv = &strVal{v: v, name: name, kind: d.Kind}
			v.Strings[name] = d.Default
		}
		for _, n := range d.Names() {
			fs.Var(fv, n, "")
			canon[n] = name
		}
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	fs.Visit(func(f *flag.Flag) { v.Set[canon[f.Name]] = true })
	v.Args = fs.Args()
	for _, d := range defs {
		name := d.Canonical()
		if d.EnvVar == "" || v.Set[name] {
			continue
		}
		ev, ok := os.LookupEnv(d.EnvVar)
		if !ok || ev == "" {
			continue
		}
		switch d.Kind {
		case Bool:
			b, err := strconv.ParseBool(ev)
			if err != nil {
				return nil, fmt.Errorf("could not parse %q as bool value for flag %s: %w", ev, name, err)
			}
			v.Bools[name] = b
		case Slice:
			for _, s := range strings.Split(ev, ",") {
				v.Slices[name] = append(v.Slices[name], strings.TrimSpace(s))
			}
		default:
			v.Strings[name] = ev
		}
		v.FromEnv[name] = true
	}
	return v, nil
}

// SliceMode is how a repeatable flag given on the command line combines with
// the same flag from the config files.
type SliceMode string

const (
	// SliceAppend: the files' values then the command line's (k3s's code:
	// file flags are inserted before the command-line flags).
	SliceAppend SliceMode = "append"
	// SliceReplace: the command line's values replace the files' list (the
	// k3s/RKE2 documentation's wording).
	SliceReplace SliceMode = "replace"
)

// SliceModeFromEnv reads K3S_DOUBLE_CLI_SLICE (append | replace).
func SliceModeFromEnv() (SliceMode, error) {
	switch m := os.Getenv("K3S_DOUBLE_CLI_SLICE"); m {
	case "", "append":
		return SliceAppend, nil
	case "replace":
		return SliceReplace, nil
	default:
		return "", fmt.Errorf("K3S_DOUBLE_CLI_SLICE=%q: want append or replace", m)
	}
}

// ApplySliceMode returns fileArgs without the repeatable flags that cliArgs
// also give, when mode is SliceReplace; else fileArgs unchanged.
func ApplySliceMode(defs []Flag, fileArgs, cliArgs []string, mode SliceMode) []string {
	if mode != SliceReplace {
		return fileArgs
	}
	byName := map[string]Flag{}
	for _, d := range defs {
		for _, n := range d.Names() {
			byName[n] = d
		}
	}
	onCLI := map[string]bool{}
	for i := 0; i < len(cliArgs); i++ {
		a := cliArgs[i]
		if a == "--" || !strings.HasPrefix(a, "-") || a == "-" {
			break // flag parsing stops here
		}
		name := strings.TrimLeft(a, "-")
		hasValue := false
		if j := strings.Index(name, "="); j >= 0 {
			name, hasValue = name[:j], true
		}
		d, ok := byName[name]
		if !ok {
			continue
		}
		if d.Kind == Slice {
			onCLI[d.Canonical()] = true
		}
		if !hasValue && d.Kind != Bool {
			i++ // "--flag value"
		}
	}
	if len(onCLI) == 0 {
		return fileArgs
	}
	var out []string
	for _, a := range fileArgs {
		name := strings.TrimLeft(a, "-")
		if j := strings.Index(name, "="); j >= 0 {
			name = name[:j]
		}
		if d, ok := byName[name]; ok && onCLI[d.Canonical()] {
			continue
		}
		out = append(out, a)
	}
	return out
}

// FlagNames lists every name (aliases included) of defs, for Parser.ValidFlags.
func FlagNames(defs []Flag) []string {
	var out []string
	for _, d := range defs {
		out = append(out, d.Names()...)
	}
	return out
}
