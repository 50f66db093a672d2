package envs

import (
	"slices"
	"testing"
)

func TestRowRange(t *testing.T) {
	f := NewArray(Float32, 4, 2, 3)
	for i := range f.Floats {
		f.Floats[i] = float64(i)
	}
	ints := NewArray(Int64, 5)
	for i := range ints.Ints {
		ints.Ints[i] = int64(10 * i)
	}
	tests := []struct {
		name      string
		a         Array
		lo, hi    int
		wantShape []int
		first     float64
	}{
		{"middle rows of a 3-d float array", f, 1, 3, []int{2, 2, 3}, 6},
		{"all rows", f, 0, 4, []int{4, 2, 3}, 0},
		{"empty range", f, 2, 2, []int{0, 2, 3}, -1},
		{"ints", ints, 3, 5, []int{2}, 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := tt.a.RowRange(tt.lo, tt.hi)
			if err := v.Validate(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(v.Shape, tt.wantShape) {
				t.Fatalf("shape %v, want %v", v.Shape, tt.wantShape)
			}
			if v.Len() == 0 {
				return
			}
			var got float64
			if v.DType.IsFloat() {
				got = v.Floats[0]
				v.Floats[0] = -7 // shares storage
				if tt.a.Floats[tt.lo*tt.a.RowSize()] != -7 {
					t.Fatal("RowRange copied the storage")
				}
				v.Floats[0] = got
			} else {
				got = float64(v.Ints[0])
			}
			if got != tt.first {
				t.Fatalf("first element %v, want %v", got, tt.first)
			}
		})
	}
	for _, r := range [][2]int{{-1, 1}, {2, 1}, {0, 5}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RowRange(%d, %d) of 4 rows did not panic", r[0], r[1])
				}
			}()
			f.RowRange(r[0], r[1])
		}()
	}
}
