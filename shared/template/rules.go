package template

import (
	"context"
	"strings"
	"sync"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
)

// Limits of a rule's evaluation: CostLimit bounds the work of one rule on one record (ample for
// comparisons, string functions and small comprehensions; a runaway nested comprehension stops
// with an evaluation failure), evalTimeout is a backstop the interpreter checks every
// interruptEvery comprehension steps.
const (
	CostLimit      = 100_000
	evalTimeout    = time.Second
	interruptEvery = 100
)

// celEnvs holds one CEL environment per name of the fields' variable: `record` for a template's
// rules, `data` for a workflow schema's.
var celEnvs sync.Map // variable name -> func() (*cel.Env, error)

func celEnv(variable string) (*cel.Env, error) {
	fn, _ := celEnvs.LoadOrStore(variable, sync.OnceValues(func() (*cel.Env, error) { return newCELEnv(variable) }))
	return fn.(func() (*cel.Env, error))()
}

func newCELEnv(variable string) (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable(variable, cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("now", cel.TimestampType),
		cel.CrossTypeNumericComparisons(true),
		cel.ParserExpressionSizeLimit(MaxExprLength),
		cel.ParserRecursionLimit(64),
	)
}

// compile parses and type-checks a rule: it must be a bool and name only declared fields as
// <variable>.<key>. The message is "" on success.
func (fm *Form) compile(expr string) (cel.Program, string) {
	env, err := celEnv(fm.variable)
	if err != nil {
		return nil, "the rule engine cannot start: " + err.Error()
	}
	checked, iss := env.Compile(expr)
	if iss != nil && iss.Err() != nil {
		return nil, "does not compile: " + firstLine(iss.Err().Error())
	}
	if !checked.OutputType().IsExactType(cel.BoolType) {
		return nil, "must be a boolean expression, not " + checked.OutputType().String()
	}
	var unknown string
	ast.PreOrderVisit(checked.NativeRep().Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		if e.Kind() != ast.SelectKind || unknown != "" {
			return
		}
		sel := e.AsSelect()
		if op := sel.Operand(); op.Kind() == ast.IdentKind && op.AsIdent() == fm.variable {
			if _, ok := fm.byKey[sel.FieldName()]; !ok {
				unknown = sel.FieldName()
			}
		}
	}))
	if unknown != "" {
		return nil, fm.variable + "." + unknown + " names no field"
	}
	prg, err := env.Program(checked, cel.CostLimit(CostLimit), cel.InterruptCheckFrequency(interruptEvery))
	if err != nil {
		return nil, "cannot be prepared: " + firstLine(err.Error())
	}
	return prg, ""
}

func firstLine(s string) string {
	s = strings.TrimPrefix(s, "ERROR: ")
	s = strings.TrimPrefix(s, "<input>:")
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// evalRule runs rule i on a typed record: ok false with a reason when the rule cannot be
// evaluated (a missing key, a type error, the cost limit).
func (fm *Form) evalRule(i int, vars map[string]any) (passed bool, reason string) {
	defer func() { // the interpreter recovers its own panics; this is the backstop of "never panics"
		if r := recover(); r != nil {
			passed, reason = false, "the rule engine failed"
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), evalTimeout)
	defer cancel()
	out, _, err := fm.programs[i].ContextEval(ctx, vars)
	if err != nil {
		return false, firstLine(err.Error())
	}
	b, ok := out.(types.Bool)
	if !ok {
		return false, "the result is not a boolean"
	}
	return bool(b), ""
}
