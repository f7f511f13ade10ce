package seal

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/pdf/stamp"
)

// layout turns the signed slots' signatures and field values into stamp placements at their
// manifest fields (DESIGN 6a). A signed slot whose role has no field in the manifest (or a
// session whose manifest source is none) gets a box on the appended signature page instead.
//
// Values: signature fields get the drawing; initials fields get the submitted initials as text
// (the callback carries initials as a value, see esign.CompletedField) or, when none was
// submitted, the drawing; date fields get the submitted date or else the signing date (UTC,
// YYYY-MM-DD); text fields the submitted text (none submitted: left blank); checkboxes their
// state. Errors: *failure when the stored fields JSON is unreadable.
func layout(sess *esign.Session, slots []esign.Slot, sigs map[int]esign.StoredSignature) ([]stamp.Placement, []stamp.SignatureBox, error) {
	var placements []stamp.Placement
	var page []stamp.SignatureBox
	for _, sl := range slots {
		sig, ok := sigs[sl.Index]
		if sl.State != esign.SlotSigned || !ok {
			continue
		}
		var fields []esign.ManifestField
		if sess.ManifestSource != esign.ManifestNone {
			fields = esign.ForRole(sess.Manifest, sl.Role)
		}
		if len(fields) == 0 {
			page = append(page, stamp.SignatureBox{Name: signerName(sl), Role: sl.Role, Image: sig.PNG})
			continue
		}
		values, err := completedFields(sig.Fields)
		if err != nil {
			return nil, nil, fail(fmt.Sprintf("the field values of slot %d are unreadable", sl.Index), err)
		}
		for _, f := range fields {
			if p, ok := placementFor(f, sl, sig, values); ok {
				placements = append(placements, p)
			}
		}
	}
	return placements, page, nil
}

func placementFor(f esign.ManifestField, sl esign.Slot, sig esign.StoredSignature, values map[string]esign.CompletedField) (stamp.Placement, bool) {
	p := stamp.Placement{Page: f.Page, Rect: stamp.Rect{X1: f.Rect[0], Y1: f.Rect[1], X2: f.Rect[2], Y2: f.Rect[3]}}
	v := values[f.Name]
	switch f.Kind {
	case esign.FieldSignature:
		p.Kind, p.Image = stamp.KindSignature, sig.PNG
	case esign.FieldInitials:
		if strings.TrimSpace(v.Value) != "" {
			p.Kind, p.Text = stamp.KindText, v.Value
		} else {
			p.Kind, p.Image = stamp.KindInitials, sig.PNG
		}
	case esign.FieldDate:
		p.Kind, p.Text = stamp.KindDate, v.Value
		if strings.TrimSpace(p.Text) == "" {
			if at, ok := sl.Timeline[esign.SlotSigned]; ok {
				p.Text = at.UTC().Format("2006-01-02")
			}
		}
	case esign.FieldText:
		p.Kind, p.Text = stamp.KindText, v.Value
	case esign.FieldCheckbox:
		p.Kind, p.Checked = stamp.KindCheckbox, v.Checked != nil && *v.Checked
	default:
		return p, false
	}
	if (p.Kind == stamp.KindDate || p.Kind == stamp.KindText) && strings.TrimSpace(p.Text) == "" {
		return p, false
	}
	if (p.Kind == stamp.KindSignature || p.Kind == stamp.KindInitials) && len(p.Image) == 0 {
		return p, false
	}
	return p, true
}

func completedFields(raw string) (map[string]esign.CompletedField, error) {
	out := map[string]esign.CompletedField{}
	if strings.TrimSpace(raw) == "" || raw == "null" {
		return out, nil
	}
	var list []esign.CompletedField
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		return nil, err
	}
	for _, f := range list {
		out[f.Name] = f
	}
	return out, nil
}

// signerName is the name the signer gave, else the name the initiator prefilled.
func signerName(sl esign.Slot) string {
	if n := strings.TrimSpace(sl.SignerName); n != "" {
		return n
	}
	return sl.NamePrefill
}
