package template

import (
	"fmt"
	"net/mail"
	"strings"

	"github.com/esign-svc/esign/shared/apperr"
)

// CodeSchemaInvalid is the code of a broken schema.yaml.
const CodeSchemaInvalid = "schema_invalid"

// Limits of a workflow schema (DESIGN 10). Its fields in all steps count against MaxFields, its
// rules against MaxRules.
const (
	MaxSteps          = 50
	MaxStages         = 10
	MaxStageApprovers = 20
)

// WorkflowSchema is a parsed, checked schema.yaml (DESIGN 10): steps of fields, rules over `data`
// (every step's fields) and `now`, and the approval stages. Its Form holds the fields of all steps
// in step order. Immutable after ParseWorkflowSchema; safe for concurrent use.
type WorkflowSchema struct {
	Form
	Title                string
	Governance           bool
	AutoValidateOnCreate bool
	Steps                []Step
	Stages               []Stage
}

// Step is one page of a workflow's form: its fields are Form.Fields[First:First+Count].
type Step struct {
	ID    string
	Title string
	First int
	Count int
}

// Stage is one approval stage: its approvers, in routing order.
type Stage struct {
	Name      string
	Approvers []string
}

type stepSpec struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Fields *value `json:"fields"`
}

type stageSpec struct {
	Name      string   `json:"name"`
	Approvers []string `json:"approvers"`
}

// ParseWorkflowSchema checks and compiles a schema.yaml. A broken schema is a 400 schema_invalid
// against field whose message names the file, line, column and key at fault:
// "schema.yaml:7:9: unknown key \"colour\" in steps[0].fields[1]".
func ParseWorkflowSchema(field string, raw []byte) (*WorkflowSchema, error) {
	bad := func(format string, args ...any) error {
		return apperr.Invalid(CodeSchemaInvalid, apperr.Field(field, fmt.Sprintf(format, args...)))
	}
	if len(raw) > MaxSchemaBytes {
		return nil, bad("%s is larger than %d KiB", FileSchema, MaxSchemaBytes>>10)
	}
	s, pr := parseSchema(raw)
	if pr != nil {
		return nil, bad("%s:%s", FileSchema, pr.where())
	}
	return s, nil
}

func parseSchema(b []byte) (*WorkflowSchema, *problem) {
	root, pr := readYAML(b)
	if pr != nil {
		return nil, pr
	}
	if root.kind != kMap {
		return nil, at(root, "", "must be a mapping of title, steps, rules, approval, ...")
	}
	s := &WorkflowSchema{Form: newForm("data", "schema")}
	for i, k := range root.keys {
		v := root.vals[i]
		var pr *problem
		switch k.text {
		case "title":
			pr = decode(v, &s.Title, "title")
			if pr == nil && strings.ContainsFunc(s.Title, refusedInLine) {
				pr = at(v, "title", "must be one line without control characters")
			}
		case "governance":
			pr = decode(v, &s.Governance, "governance")
		case "autoValidateOnCreate":
			pr = decode(v, &s.AutoValidateOnCreate, "autoValidateOnCreate")
		case "steps":
			pr = s.parseSteps(v)
		case "rules":
			continue // after the steps: a rule names a field
		case "approval":
			pr = s.parseApproval(v)
		default:
			pr = &problem{line: k.line, col: k.col, unknown: k.text}
		}
		if pr != nil {
			return nil, pr
		}
	}
	if pr := s.parseRules(root.get("rules")); pr != nil {
		return nil, pr
	}
	if len(s.Steps) == 0 {
		return nil, at(orItem(root.get("steps"), root), "steps", "at least one step is required")
	}
	return s, nil
}

func (s *WorkflowSchema) parseSteps(v *value) *problem {
	if v.kind == kNull {
		return nil
	}
	ids := map[string]int{}
	return eachItem(v, "steps", MaxSteps, func(i int, item *value, path string, sp stepSpec) *problem {
		if pr := uniqueID(ids, item, "steps", path, sp.ID, i); pr != nil {
			return pr
		}
		if strings.ContainsFunc(sp.Title, refusedInLine) {
			return at(item.get("title"), path+".title", "must be one line without control characters")
		}
		first := len(s.Fields)
		if f := item.get("fields"); f != nil {
			if pr := s.parseFields(f, path+".fields", MaxFields); pr != nil {
				return pr
			}
		}
		s.Steps = append(s.Steps, Step{ID: sp.ID, Title: sp.Title, First: first, Count: len(s.Fields) - first})
		return nil
	})
}

func (s *WorkflowSchema) parseApproval(v *value) *problem {
	if v.kind == kNull {
		return nil
	}
	if v.kind != kMap {
		return at(v, "approval", "must be a mapping of stages")
	}
	for i, k := range v.keys {
		if k.text != "stages" {
			return &problem{path: "approval", line: k.line, col: k.col, unknown: k.text}
		}
		if v.vals[i].kind == kNull {
			return nil
		}
	}
	stages := v.get("stages")
	if stages == nil {
		return nil
	}
	return eachItem(stages, "approval.stages", MaxStages, func(i int, item *value, path string, sp stageSpec) *problem {
		switch {
		case strings.TrimSpace(sp.Name) == "":
			return at(orItem(item.get("name"), item), path, "name is required")
		case strings.ContainsFunc(sp.Name, refusedInLine) || len(sp.Name) > 200:
			return at(item.get("name"), path+".name", "must be one line of at most 200 characters")
		case len(sp.Approvers) == 0:
			return at(orItem(item.get("approvers"), item), path, "at least one approver is required")
		case len(sp.Approvers) > MaxStageApprovers:
			return at(item.get("approvers"), path+".approvers", "holds more than %d approvers", MaxStageApprovers)
		}
		seen := map[string]bool{}
		for j, a := range sp.Approvers {
			addr, err := mail.ParseAddress(a)
			if len(a) > maxEmail || err != nil || addr.Address != a || seen[strings.ToLower(a)] {
				return at(item.get("approvers").vals[j], fmt.Sprintf("%s.approvers[%d]", path, j), "must be a plain e-mail address (name@example.com), given once")
			}
			seen[strings.ToLower(a)] = true
		}
		s.Stages = append(s.Stages, Stage{Name: sp.Name, Approvers: sp.Approvers})
		return nil
	})
}
