package envs

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
)

// CheckOptionKeys returns an error naming the first key of options that is not in allowed.
func CheckOptionKeys(options map[string]any, allowed ...string) error {
	keys := make([]string, 0, len(options))
	for k := range options {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(allowed, k) {
			return fmt.Errorf("unknown option %q (known: %s)", k, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// OptionInt reads an integer option; it accepts any Go integer type and integral floats (as JSON
// decoding produces). A missing key gives def.
func OptionInt(options map[string]any, key string, def int) (int, error) {
	v, ok := options[key]
	if !ok {
		return def, nil
	}
	n, err := Int64Of(v)
	if err != nil {
		return 0, fmt.Errorf("option %q: %w", key, err)
	}
	return int(n), nil
}

// Int64Of is v as an int64 when it is a value of any Go integer type that fits, or a float64 that
// is an integer of magnitude at most 2^53 (as JSON decoding gives).
func Int64Of(v any) (int64, error) {
	switch x := v.(type) {
	case int, int8, int16, int32, int64:
		return reflect.ValueOf(x).Int(), nil
	case uint, uint8, uint16, uint32, uint64:
		u := reflect.ValueOf(x).Uint()
		if u > math.MaxInt64 {
			return 0, fmt.Errorf("%d is too large", u)
		}
		return int64(u), nil
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
			return 0, fmt.Errorf("%v is not an integer", x)
		}
		return int64(x), nil
	default:
		return 0, fmt.Errorf("%v is a %T, want an integer", v, v)
	}
}

// OptionBool reads a boolean option. A missing key gives def.
func OptionBool(options map[string]any, key string, def bool) (bool, error) {
	v, ok := options[key]
	if !ok {
		return def, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("option %q is a %T, want a bool", key, v)
	}
	return b, nil
}

// ParseAutoresetMode accepts the names AutoresetMode.String gives ("next-step", "disabled"; also
// "next_step" and "none").
func ParseAutoresetMode(name string) (AutoresetMode, error) {
	switch strings.ToLower(name) {
	case "next-step", "next_step", "nextstep":
		return AutoresetNextStep, nil
	case "disabled", "none", "off":
		return AutoresetDisabled, nil
	}
	return 0, fmt.Errorf("unknown autoreset mode %q (want next-step or disabled)", name)
}

// OptionAutoreset reads an autoreset mode given as an AutoresetMode or as its name.
func OptionAutoreset(options map[string]any, key string, def AutoresetMode) (AutoresetMode, error) {
	v, ok := options[key]
	if !ok {
		return def, nil
	}
	switch x := v.(type) {
	case AutoresetMode:
		if x != AutoresetNextStep && x != AutoresetDisabled {
			return 0, fmt.Errorf("option %q: invalid autoreset mode %d", key, int(x))
		}
		return x, nil
	case string:
		m, err := ParseAutoresetMode(x)
		if err != nil {
			return 0, fmt.Errorf("option %q: %w", key, err)
		}
		return m, nil
	default:
		return 0, fmt.Errorf("option %q is a %T, want an AutoresetMode or its name", key, v)
	}
}
