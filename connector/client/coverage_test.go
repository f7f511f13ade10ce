package client

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"testing"
)

// methods names the client's methods of each operation of docs/openapi.yaml; an empty list is
// an operation the client leaves out on purpose (the signing portal's own API and its signed
// callback: the portal calls them, not a source system).
var methods = map[string][]string{
	"Health": {"Health"}, "CreateSession": {"CreateSession"}, "SessionStatus": {"SessionStatus"},
	"SessionStatusByGroup": {"SessionStatusByGroup"}, "ResendInvite": {"ResendInvite"},
	"CancelSession": {"CancelSession"}, "RevokeSession": {"RevokeSession"},
	"RetrySeal": {"RetrySeal"}, "EraseSignerEmail": {"EraseSignerEmail"},
	"PortalActivate": nil, "PortalSession": nil, "PortalViewed": nil, "PortalConsent": nil, "PortalDecline": nil,
	"PortalOTPSend": nil, "PortalOTPVerify": nil, "PortalTransferCreate": nil, "PortalTransferRedeem": nil,
	"DocumentPreflight": nil, "DocumentProxy": nil, "DocumentProxyHead": nil, "Callback": nil,
	"CreateDelivery": {"CreateDelivery"}, "ListDeliverySessions": {"ListDeliveries"}, "RevokeDelivery": {"RevokeDelivery"},
	"DeliveryMetadata": {"DeliveryMetadata"}, "DeliverySAS": {"DeliverySAS"}, "DeliveryDownload": {"DeliveryDownload"},
	"DeliveryAccess": {"DeliveryAccess"}, "DeliveryOTPSend": {"DeliveryOTPSend"}, "DeliveryOTPVerify": {"DeliveryOTPVerify"},
	"Render": {"Render", "SubmitBatch"}, "ListBatches": {"ListBatches"}, "GetBatch": {"GetBatch"},
	"BatchRecords": {"BatchRecords"}, "BatchReceipt": {"BatchReceiptPDF"}, "DecideBatch": {"DecideBatch"},
	"CancelBatch": {"CancelBatch"}, "UploadDocument": {"UploadDocument"}, "CreateWorkflow": {"CreateWorkflow"},
	"GetWorkflow": {"WorkflowPayloadWithToken"}, "WorkflowStep": {"SaveWorkflowStep"}, "WorkflowAdvance": {"AdvanceWorkflow"},
	"WorkflowFixValidation": {"FixWorkflowValidation"}, "WorkflowRequestChanges": {"RequestWorkflowChanges"},
	"WorkflowGovernanceDecision": {"GovernanceDecision"}, "WorkflowReject": {"RejectWorkflow", "RejectWorkflowWithToken"},
	"WorkflowStatus": {"WorkflowStatus", "WorkflowStatusWithToken"}, "WorkflowApprove": {"ApproveWorkflow"},
	"WorkflowEscalate": {"EscalateWorkflow"}, "WorkflowCancel": {"CancelWorkflow"}, "WorkflowSeal": {"SealWorkflow"},
	"WorkflowExport": {"WorkflowExportJSON", "WorkflowExportCSV"}, "WorkflowResendInvite": {"ResendWorkflowInvite"},
	"WorkflowOTPSend": {"WorkflowOTPSend"}, "WorkflowOTPVerify": {"WorkflowOTPVerify"},
	"CreateWebhook": {"CreateWebhook"}, "ListWebhooks": {"ListWebhooks"}, "GetWebhook": {"GetWebhook"},
	"DeleteWebhook": {"DeleteWebhook"}, "RotateWebhookSecret": {"RotateWebhookSecret"},
	"ListWebhookDeliveries": {"ListWebhookDeliveries"}, "PingWebhook": {"PingWebhook"},
}

// TestEveryOperation: each operation of docs/openapi.yaml is in methods (a new route fails here
// until the client covers it or says why not), and each method named exists.
func TestEveryOperation(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, m := range regexp.MustCompile(`(?m)^\s+operationId: (\w+)`).FindAllSubmatch(doc, -1) {
		ops = append(ops, string(m[1]))
	}
	if len(ops) < 50 {
		t.Fatalf("only %d operations read", len(ops))
	}
	ct := reflect.TypeFor[*Client]()
	for _, op := range ops {
		names, ok := methods[op]
		if !ok {
			t.Errorf("operation %s: no client method and no reason to leave it out", op)
		}
		for _, n := range names {
			if _, ok := ct.MethodByName(n); !ok {
				t.Errorf("operation %s: the client has no method %s", op, n)
			}
		}
	}
	for op := range methods {
		if !slices.Contains(ops, op) {
			t.Errorf("%s is not an operation of docs/openapi.yaml", op)
		}
	}
}
