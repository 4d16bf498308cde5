// Package filter is the OData $filter language of the Azure Table service:
// a parser, a typed evaluator with the service's semantics, a planner that
// turns a filter into key ranges, and a builder that makes filters from
// typed Go values so that they never need to be assembled from strings.
//
// There are only a few types in filter: Filter, Expr and Field. A Filter
// is a parsed or built expression; it implements localtable.Predicate, so
// it can be passed to a query, and its String is canonical $filter syntax
// to send to the real service. An Expr is a node of its syntax tree
// (*Comparison, *Constant, *AndExpr, *OrExpr, *NotExpr). A Field names a
// property for the builder: filter.Prop("Age").Gt(30).
//
// # Syntax
//
// The language is that of the service: the comparison operators eq, ne,
// gt, ge, lt and le, the logical operators and, or and not, and
// parentheses. not binds tightest, then the comparisons, then and, then
// or; and and or group from the left. A comparison has a property on one
// side and a literal on the other; "5 lt Age" is read as "Age gt 5", and
// "true eq IsActive" as "IsActive eq true". A bare property used as a
// condition, as in "not IsActive", means "IsActive eq true". The Boolean
// literals true and false are conditions too, as the OData grammar allows
// and as the service accepts: "true", "not false", "(true)", "true and
// PartitionKey eq 'a'", "false or X" (the form .NET's LINQ predicate
// builders send). Two literals do not compare: "true eq false" is an
// error, as are other literals used as conditions ("5", "not 'a'").
//
// Literals:
//
//	'it''s'                          Edm.String; a doubled quote is a quote
//	42, -5                           Edm.Int32
//	42L (or 42l)                     Edm.Int64
//	1.5, 1e3, 1.5E-3, 2d, NaN, INF, -INF   Edm.Double
//	true, false                      Edm.Boolean
//	datetime'2008-07-10T00:00:00Z'   Edm.DateTime
//	guid'0f8fad5b-d9cb-469f-a165-70867728950e'  Edm.Guid
//	X'0A0B', binary'0A0B'            Edm.Binary, hexadecimal
//
// An integer without a suffix is Int32, and one outside Int32's range is
// an error, as the service answers "Unrecognized 'Edm.Int32' literal": a
// 64-bit value needs the L suffix. Decimal and Single literals (the m and
// f suffixes) are not supported, as the service has no such types.
// A datetime has up to 7 fractional digits (more is an error, since the
// service keeps 100 ns); its seconds may be omitted; it may end in Z, in
// an offset such as +02:00 (converted to UTC), or in nothing (UTC). Years
// run from 0001 to 9999. A guid is in 8-4-4-4-12 form without braces; a
// binary has an even number of hex digits in either case.
//
// Keywords (and, or, not, eq, ne, gt, ge, lt, le, true, false, NaN, INF)
// are case-sensitive, as all parts of a filter are in the service: "AND"
// and "True" are property names, so "A eq True" is an error. The literal
// prefixes datetime, guid, binary and X are matched in any case, as by
// the OData library behind the service. Property names are identifiers: a
// letter or '_' followed by letters, digits and '_'.
//
// Parse enforces the service's documented limit of 15 discrete
// comparisons (MaxComparisons), counting each comparison and each bare
// property, but not the Boolean literals, which compare nothing;
// ParseWithOptions lifts it for embedded use. The service documents no
// other limit. Two hard caps hold whatever the options: nesting of
// parentheses and not is limited to MaxDepth levels, and a filter to
// MaxLength bytes (1 MiB), so that no input can make parsing or planning
// slow: a filter of that size parses and plans in well under a second,
// and a longer one is refused before it is read. An empty filter is an
// error: a query without a filter passes a nil predicate. Errors are
// *SyntaxError, with the byte offset of the problem and what was expected
// there; they satisfy errors.Is(err, localtable.ErrInvalidInput), so the
// HTTP layer answers 400 InvalidInput as the service does.
//
// # Evaluation
//
// Match evaluates a filter against an entity as the service does:
//
//   - A comparison with a property the entity lacks is false, for ne too.
//     not negates the Boolean result, so "not (X eq 1)" is true for an
//     entity without X.
//   - The literal true holds for every entity and false for none.
//   - Values of different types never compare: "Code eq 5" is false, and
//     so is "Code ne 5", for a String Code.
//   - Numbers: an Int32 literal (an unsuffixed integer) compares by value
//     with Int32, Int64 and Double properties; an Int64 literal compares
//     only with Int64 properties and a Double literal only with Double
//     properties. The service's documentation says only that the literal
//     must have the property's type for valid results; reports against
//     the service (Azure Storage Explorer issues 5346 and 6866) show an
//     unsuffixed integer matching Int64 and Double properties while an L
//     literal does not match Int32 or Double ones. That is this rule: the
//     literal is widened to the property's type only from Int32, the type
//     most clients write without thinking about it.
//   - Doubles compare as IEEE 754, as the .NET operators the service's
//     OData stack evaluates with: NaN is unordered, so every comparison
//     with NaN is false except ne, which is true; 0 equals -0.
//   - Strings compare ordinally by UTF-16 code unit, so a character above
//     U+FFFF (a surrogate pair) sorts before U+E000.
//   - Booleans compare for every operator, false before true, as .NET's
//     Boolean.CompareTo orders them.
//   - DateTimes compare at their full 100 ns precision.
//   - Guids compare for every operator, by the bytes of their canonical
//     text form (so by that text, case aside); Binary values bytewise.
//
// # Planning
//
// KeyRanges compiles a filter into the ranges of (PartitionKey, RowKey) a
// query must scan; the whole filter stays the residual that Match checks
// on each entity scanned. PartitionKey comparisons bound partitions,
// RowKey comparisons narrow ranges within a partition, and intersects and
// or unites; not, ne, and other properties do not bound. A key compared
// with a non-string literal matches nothing, and plans no ranges at all;
// so does false, so a false conjunct empties the plan, while true bounds
// nothing and scans the table. not of a constant is the other constant.
// Explain prints the plan.
//
// Planning takes O(n log n) time for n comparisons: a chain such as "a or
// b or c" is planned as one node, and sets of ranges are united and
// intersected by sorting and merging, never pairwise against each other.
// The plan is exact, not approximated, with one bound: narrowing ranges by
// RowKey, which can multiply them ("(PartitionKey eq 'a' or …) and (RowKey
// eq '1' or …)" is every pair), adds at most 65,536 ranges to one plan;
// beyond, the partitions concerned are scanned whole, and Match checks
// the rest.
//
// # Building
//
// Prop, PartitionKey, RowKey and Timestamp name a property; the Field's
// Eq, Ne, Gt, Ge, Lt and Le compare it with a typed value; Const is the
// literal true or false; And, Or and Not combine filters. Format binds
// values into a template:
//
//	f, err := filter.Format("PartitionKey eq {} and Age gt {}", pk, 30)
//
// No function of the package returns a nil *Filter, and a query refuses
// one (a nil pointer in QueryOptions.Filter is not "no filter"; leave the
// filter unset for that). And of no filters is Const(true), which matches
// every entity and prints as "true", a filter the service accepts; Or of
// no filters is Const(false). So optional conditions combine without a
// special case:
//
//	var conds []*filter.Filter
//	if pk != "" {
//		conds = append(conds, filter.PartitionKey().Eq(pk))
//	}
//	if minAge > 0 {
//		conds = append(conds, filter.Prop("Age").Ge(minAge))
//	}
//	f := filter.And(conds...) // "true" when there is no condition
//
// The arguments of And, Or and Not may be nil, taken for true: And(f,
// cond) with a nil f is cond, Or with a nil argument is Const(true), and
// Not(nil) is Const(false).
//
// A Go value's type chooses its literal's Edm type, so that the obvious
// code matches what it should. An integer of any Go type (int, int64,
// uint8, a named "type Age int") is an Int32 literal when its value fits
// Int32, as the unsuffixed "42" of the service's syntax is, and an Int64
// literal (42L) beyond: an Int32 literal compares by value with Int32,
// Int64 and Double properties, so filter.Prop("Age").Eq(42) finds 42
// however it was stored, while an Int64 literal matches only Int64
// properties. Int64(v) and Int32(v) choose the type explicitly. float64
// and float32 are Double; string, bool, []byte and named types of those
// kinds are String, Boolean and Binary; time.Time is DateTime,
// localtable.GUID Guid, and a localtable.Value is itself.
//
// The builder never panics on misuse. An invalid property name, a value
// without a literal (nil, a struct, a uint64 beyond math.MaxInt64, a
// string that is not UTF-8, a DateTime outside years 1 to 9999) or an
// invalid tree given to New makes a Filter that carries the error: Err
// returns it, And, Or and Not pass it on, the Filter matches nothing, its
// String does not parse, and a query that uses it fails with the error.
// Built filters are not subject to the comparison limit; their String is
// what to send to the service.
//
// Filters and syntax trees are immutable and safe for concurrent use.
package filter
