// Package configfile reads k3s's command line and configuration files the way
// k3s does (k3s-io/k3s pkg/configfilearg, pkg/cli/cmds and the GetArgs helper
// of pkg/daemons/config), for the k3s test double. It has no Kubernetes imports
// so that its tests run without compiling Kubernetes.
package configfile

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v2"
)

// Parser mirrors k3s's configfilearg.Parser: it finds the subcommand (After),
// reads the config file named by ConfigFlags / EnvName / DefaultConfig plus its
// ".d" drop-ins, and inserts the flags they hold right after the subcommand.
type Parser struct {
	After         []string
	ConfigFlags   []string
	OverrideFlags []string
	EnvName       string
	DefaultConfig string
	// ValidFlags lists, per subcommand, the flag names (aliases included)
	// that are kept from config files; other keys are dropped with a warning.
	// A subcommand without an entry keeps every key.
	ValidFlags map[string][]string
	// Warnf receives the warnings k3s logs (unknown keys). May be nil.
	Warnf func(format string, args ...any)
}

// Parts is the result of ParseParts: the effective argument list is
// Prefix + File + CLI.
type Parts struct {
	Prefix []string // program name .. subcommand
	File   []string // flags from config.yaml and config.yaml.d/*
	CLI    []string // flags given on the command line after the subcommand
	Files  []string // config files read, in order
}

// Parse returns args with the config files' flags inserted after the subcommand.
func (p *Parser) Parse(args []string) ([]string, error) {
	parts, err := p.ParseParts(args)
	if err != nil {
		return nil, err
	}
	if parts == nil {
		return args, nil
	}
	out := append([]string{}, parts.Prefix...)
	out = append(out, parts.File...)
	return append(out, parts.CLI...), nil
}

// ParseParts is Parse, keeping the three parts apart. It returns nil parts
// (and no error) when no subcommand is found: args are then used unchanged.
func (p *Parser) ParseParts(args []string) (*Parts, error) {
	prefix, suffix, found := p.findStart(args)
	if !found {
		return nil, nil
	}
	noFiles := &Parts{Prefix: prefix, CLI: suffix}
	configFile := p.findConfigFileFlag(args)
	if configFile == "" {
		return noFiles, nil
	}
	values, files, err := readConfigFile(configFile)
	if err != nil {
		if os.IsNotExist(err) {
			// k3s: a missing config file (and no drop-ins) is not an error,
			// even when it was named explicitly.
			return noFiles, nil
		}
		return nil, err
	}
	if len(args) > 1 {
		values = p.stripInvalidFlags(args[1], values)
	}
	return &Parts{Prefix: prefix, File: values, CLI: suffix, Files: files}, nil
}

func (p *Parser) warnf(format string, a ...any) {
	if p.Warnf != nil {
		p.Warnf(format, a...)
	}
}

var flagNameRe = regexp.MustCompile("^-+([^=]*)=")

func (p *Parser) stripInvalidFlags(command string, args []string) []string {
	names, ok := p.ValidFlags[command]
	if !ok || len(names) == 0 {
		return args
	}
	valid := map[string]bool{}
	for _, n := range names {
		for _, s := range strings.Split(n, ",") {
			valid[strings.TrimSpace(s)] = true
		}
	}
	var result []string
	for _, arg := range args {
		name := arg
		if m := flagNameRe.FindStringSubmatch(arg); m != nil {
			name = m[1]
		}
		if valid[name] {
			result = append(result, arg)
		} else {
			p.warnf("Unknown flag %s found in config.yaml, skipping", strings.Split(arg, "=")[0])
		}
	}
	return result
}

// FindString returns the value of key target from the config files (not the
// command line), "," joining appended values, as k3s's FindString does.
func (p *Parser) FindString(args []string, target string) (string, error) {
	for _, arg := range args {
		for _, f := range p.OverrideFlags {
			if f == arg {
				return arg, nil
			}
		}
	}
	var files []string
	var lastVal string
	if configFile := p.findConfigFileFlag(args); configFile != "" {
		if _, err := os.Stat(configFile); err == nil {
			files = append(files, configFile)
		}
		dropins, err := DropinFiles(configFile)
		if err != nil {
			return "", err
		}
		files = append(files, dropins...)
	}
	for _, file := range files {
		data, err := readData(file)
		if err != nil {
			return "", err
		}
		ms := yaml.MapSlice{}
		if err := yaml.Unmarshal(data, &ms); err != nil {
			return "", err
		}
		for _, item := range ms {
			k, v := toString(item.Key), toString(item.Value)
			isAppend := strings.HasSuffix(k, "+")
			k = strings.TrimSuffix(k, "+")
			if k == target {
				if isAppend {
					lastVal = lastVal + "," + v
				} else {
					lastVal = v
				}
			}
		}
	}
	return lastVal, nil
}

// findConfigFileFlag: env var first, then the first --config/-c on the
// command line, else the default.
func (p *Parser) findConfigFileFlag(args []string) string {
	if v := os.Getenv(p.EnvName); p.EnvName != "" && v != "" {
		return v
	}
	for i, arg := range args {
		for _, name := range p.ConfigFlags {
			if name == arg {
				if len(args) > i+1 {
					return args[i+1]
				}
				return "" // invalid; the flag parser reports it later
			} else if strings.HasPrefix(arg, name+"=") {
				return arg[len(name)+1:]
			}
		}
	}
	return p.DefaultConfig
}

var afterNumRe = regexp.MustCompile(`(.+):(\d+)`)

func (p *Parser) findStart(args []string) ([]string, []string, bool) {
	if len(p.After) == 0 {
		return []string{}, args, true
	}
	after := append([]string{}, p.After...)
	skipFor := map[string]int{}
	for i, a := range after {
		if m := afterNumRe.FindStringSubmatch(a); m != nil {
			after[i] = m[1]
			n, err := strconv.Atoi(m[2])
			if err != nil {
				return args, nil, false
			}
			skipFor[m[1]] = n
		}
	}
	for i, val := range args {
		for _, test := range after {
			if val != test {
				continue
			}
			if skip := skipFor[test]; skip != 0 {
				if len(args) <= i+skip || strings.HasPrefix(args[i+skip], "-") {
					return args[0 : i+1], args[i+1:], true
				}
				return args[0 : i+skip+1], args[i+skip+1:], true
			}
			return args[0 : i+1], args[i+1:], true
		}
	}
	return args, nil, false
}

// DropinFiles lists <base>.d/*.yaml|*.yml (case-insensitive suffix) in name order.
func DropinFiles(base string) ([]string, error) {
	entries, err := os.ReadDir(base + ".d")
	if os.IsNotExist(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries { // os.ReadDir sorts by name
		if e.IsDir() {
			continue
		}
		n := strings.ToLower(e.Name())
		if !strings.HasSuffix(n, ".yaml") && !strings.HasSuffix(n, ".yml") {
			continue
		}
		out = append(out, filepath.Join(base+".d", e.Name()))
	}
	return out, nil
}

// ReadConfigFile flattens file and its drop-ins into flags, as k3s does.
func ReadConfigFile(file string) ([]string, error) {
	v, _, err := readConfigFile(file)
	return v, err
}

func readConfigFile(file string) (result []string, files []string, _ error) {
	dropins, err := DropinFiles(file)
	if err != nil {
		return nil, nil, err
	}
	if _, err := os.Stat(file); err != nil {
		if !(os.IsNotExist(err) && len(dropins) > 0) {
			return nil, nil, err
		}
		files = dropins
	} else {
		files = append([]string{file}, dropins...)
	}

	keySeen := map[string]bool{}
	var keyOrder []string
	values := map[string]any{}
	for _, f := range files {
		data, err := readData(f)
		if err != nil {
			return nil, nil, err
		}
		ms := yaml.MapSlice{}
		if err := yaml.Unmarshal(data, &ms); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, item := range ms {
			k, v := toString(item.Key), item.Value
			isAppend := strings.HasSuffix(k, "+")
			k = strings.TrimSuffix(k, "+")
			if !keySeen[k] {
				keySeen[k] = true
				keyOrder = append(keyOrder, k)
			}
			if old, ok := values[k]; ok && isAppend {
				values[k] = append(toSlice(old), toSlice(v)...)
			} else {
				values[k] = v
			}
		}
	}
	for _, k := range keyOrder {
		prefix := "--"
		if len(k) == 1 {
			prefix = "-"
		}
		if slice, ok := values[k].([]any); ok {
			for _, v := range slice {
				result = append(result, prefix+k+"="+toString(v))
			}
		} else {
			result = append(result, prefix+k+"="+toString(values[k]))
		}
	}
	return result, files, nil
}

func toSlice(v any) []any {
	switch t := v.(type) {
	case string:
		return []any{t}
	case []any:
		return t
	default:
		s := strings.TrimSpace(toString(v))
		if s == "" {
			return nil
		}
		return []any{s}
	}
}

// toString is wrangler's convert.ToString: time as RFC3339, the first element
// of a list, nil as "", else fmt.Sprint, trimmed.
func toString(v any) string {
	if t, ok := v.(time.Time); ok {
		return t.Format(time.RFC3339)
	}
	if s, ok := v.([]any); ok {
		if len(s) == 0 {
			return ""
		}
		v = s[0]
	}
	if v == nil {
		return ""
	}
	return strings.TrimSpace(fmt.Sprint(v))
}

func readData(file string) ([]byte, error) {
	u, err := url.Parse(file)
	if err != nil {
		return nil, fmt.Errorf("failed to parse config location %s: %w", file, err)
	}
	switch u.Scheme {
	case "http", "https":
		resp, err := http.Get(file)
		if err != nil {
			return nil, fmt.Errorf("failed to read http config %s: %w", file, err)
		}
		defer resp.Body.Close()
		return io.ReadAll(resp.Body)
	default:
		return os.ReadFile(file)
	}
}

// GetArgs is k3s's config.GetArgs: defaults in initial, extra "key=value"
// entries (leading "--" optional, no "=" means "true"). A plain key replaces
// the default and repeats accumulate in order; "key+=v" appends to the
// default, "key-=v" prepends. Output is sorted by key, "--key=value".
func GetArgs(initial map[string]string, extra []string) []string {
	init := map[string]string{}
	for k, v := range initial {
		init[k] = v
	}
	multi := map[string][]string{}
	for _, raw := range extra {
		split := strings.SplitN(strings.TrimPrefix(raw, "--"), "=", 2)
		arg := split[0]
		value := "true"
		if len(split) > 1 {
			value = split[1]
		}
		clean := strings.TrimRight(arg, "-+")
		initVal, initOK := init[clean]
		existing, existingOK := multi[clean]
		var nv []string
		switch {
		case strings.HasSuffix(arg, "+"):
			if initOK {
				nv = append(nv, initVal)
			}
			if existingOK {
				nv = append(nv, existing...)
			}
			nv = append(nv, value)
		case strings.HasSuffix(arg, "-"):
			nv = append(nv, value)
			if initOK {
				nv = append(nv, initVal)
			}
			if existingOK {
				nv = append(nv, existing...)
			}
		default:
			if existingOK {
				nv = append(nv, existing...)
			}
			nv = append(nv, value)
		}
		delete(init, clean)
		multi[clean] = nv
	}
	for k, v := range init {
		multi[k] = []string{v}
	}
	keys := make([]string, 0, len(multi))
	for k := range multi {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		for _, v := range multi[k] {
			out = append(out, "--"+strings.TrimPrefix(k, "--")+"="+v)
		}
	}
	return out
}

// LastArgValue returns the value the component will use for key among
// "--key=value" args: the last one (pflag keeps the last), and whether found.
func LastArgValue(key string, args []string) (string, bool) {
	val, found := "", false
	for _, a := range args {
		s := strings.SplitN(strings.TrimPrefix(a, "--"), "=", 2)
		if s[0] == key {
			found = true
			val = ""
			if len(s) > 1 {
				val = s[1]
			}
		}
	}
	return val, found
}
