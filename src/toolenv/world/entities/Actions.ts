/**
 * Actions without a target entity (send a message, shorten a link, open a ticket ...): each creates a record
 * that a status tool of the same provider can read back, which makes "create, then check" dependencies.
 */
import type { ActionDef } from "../Model.ts"
import * as V from "../Values.ts"
import * as W from "../Words.ts"

const segments = (text: string): number => Math.max(1, Math.ceil(text.length / 153))

/** Standalone actions by key. */
export const standaloneActions: ReadonlyArray<ActionDef> = [
  {
    key: "send_sms", label: "send an SMS message", creates: "sms_message",
    recordId: (h) => `SM${V.hex(h, 32)}`,
    inputs: [
      { key: "to", label: "recipient phone number (E.164)", type: "string", required: true, example: (h) => V.phone(h) },
      { key: "body", label: "message text", type: "string", required: true, example: (h) => `Your code is ${V.int(h, 100000, 999999)}` },
      { key: "sender_id", label: "sender name", type: "string", required: false, example: (h) => V.coined(h) }
    ],
    compute: (_t, args, h) => {
      const body = typeof args["body"] === "string" ? args["body"] : ""
      return { to: args["to"] ?? "", segments: segments(body), price: Math.round(segments(body) * 0.0079 * 10000) / 10000, status: V.chance(h, 0.9) ? "delivered" : "queued" }
    },
    recordAttrs: [
      { key: "to", label: "recipient", type: "string" },
      { key: "segments", label: "segments", type: "integer" },
      { key: "price", label: "price (USD)", type: "number" },
      { key: "status", label: "delivery status", type: "string" }
    ]
  },
  {
    key: "send_email", label: "send an email", creates: "outgoing_email",
    recordId: (h) => `<${V.hex(h, 20)}@mail.sender.example>`,
    inputs: [
      { key: "to", label: "recipient email", type: "string", format: "email", required: true, example: (h) => V.email(V.personName(h), V.mailDomain(V.sub(h, "d")), h) },
      { key: "subject", label: "subject", type: "string", required: true, example: (h) => `${V.pick(["Meeting notes", "Invoice", "Welcome", "Reminder"], h)} ${V.int(h, 1, 99)}` },
      { key: "body", label: "message body", type: "string", required: true, example: (h) => V.sentence(h, "Our team") }
    ],
    compute: (_t, args, h) => ({ to: args["to"] ?? "", subject: args["subject"] ?? "", status: V.chance(h, 0.95) ? "sent" : "deferred" }),
    recordAttrs: [
      { key: "to", label: "recipient", type: "string", format: "email" },
      { key: "subject", label: "subject", type: "string" },
      { key: "status", label: "status", type: "string" }
    ]
  },
  {
    key: "shorten_url", label: "shorten a long URL", creates: "short_link",
    recordId: (h) => V.alphanumeric(h, 7),
    inputs: [
      { key: "long_url", label: "URL to shorten", type: "string", format: "uri", required: true, example: (h) => `https://www.${V.domainFor(V.compound(h), h)}/${V.slug(V.title(V.sub(h, "t")))}` },
      { key: "alias", label: "custom alias", type: "string", required: false, example: () => "" }
    ],
    compute: (_t, args, h) => ({ long_url: args["long_url"] ?? "", short_url: `https://sho.rt/${V.alphanumeric(h, 7)}`, clicks: 0 }),
    recordAttrs: [
      { key: "long_url", label: "target URL", type: "string", format: "uri" },
      { key: "short_url", label: "short URL", type: "string", format: "uri" },
      { key: "clicks", label: "clicks", type: "integer" }
    ]
  },
  {
    key: "open_ticket", label: "open a support ticket", creates: "new_ticket",
    recordId: (h) => `TCK-${V.chars(h, 7, "0123456789")}`,
    inputs: [
      { key: "subject", label: "subject", type: "string", required: true, example: (h) => `${V.pick(["Cannot log in", "Refund request", "Billing question"], h)}` },
      { key: "priority", label: "priority", type: "string", values: W.priorities, required: false, example: (h) => V.pick(W.priorities, h) },
      { key: "requester_email", label: "requester email", type: "string", format: "email", required: true, example: (h) => V.email(V.personName(h), V.mailDomain(V.sub(h, "d")), h) }
    ],
    compute: (_t, args, h) => ({ subject: args["subject"] ?? "", priority: args["priority"] ?? "normal", status: "open", assignee: V.personName(h) }),
    recordAttrs: [
      { key: "subject", label: "subject", type: "string" },
      { key: "priority", label: "priority", type: "string" },
      { key: "status", label: "status", type: "string" },
      { key: "assignee", label: "assignee", type: "string" }
    ]
  },
  {
    key: "publish_post", label: "publish a social post", creates: "published_post",
    recordId: (h) => `18${V.chars(h, 17, "0123456789")}`,
    inputs: [
      { key: "text", label: "post text", type: "string", required: true, example: (h) => `${V.sentence(h, "Today")} #${V.pick(W.topics, h)}` },
      { key: "schedule_at", label: "publication date (optional)", type: "string", format: "date", required: false, example: (h) => V.futureDate(h, 1, 14) }
    ],
    compute: (_t, args) => ({ text: args["text"] ?? "", status: typeof args["schedule_at"] === "string" ? "scheduled" : "published", visibility: "public" }),
    recordAttrs: [
      { key: "text", label: "text", type: "string" },
      { key: "status", label: "status", type: "string" },
      { key: "visibility", label: "visibility", type: "string" }
    ]
  },
  {
    key: "create_label", label: "create a shipping label", creates: "shipping_label",
    recordId: (h) => `1Z${V.chars(h, 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")}`,
    inputs: [
      { key: "weight_kg", label: "parcel weight (kg)", type: "number", minimum: 0.01, maximum: 70, required: true, example: (h) => V.float(h, 0.2, 12, 1) },
      { key: "destination_postcode", label: "destination postal code", type: "string", required: true, example: (h) => String(V.int(h, 10000, 99999)) },
      { key: "service", label: "service level", type: "string", values: ["ground", "express", "overnight"], required: false, example: () => "ground" }
    ],
    compute: (_t, args) => {
      const w = typeof args["weight_kg"] === "number" ? args["weight_kg"] : 1
      const service = typeof args["service"] === "string" ? args["service"] : "ground"
      const rate = service === "overnight" ? 9.5 : service === "express" ? 5.2 : 2.4
      return { service, cost: Math.round((4.9 + rate * w) * 100) / 100, currency: "USD", estimated_days: service === "overnight" ? 1 : service === "express" ? 2 : 5 }
    },
    recordAttrs: [
      { key: "service", label: "service", type: "string" },
      { key: "cost", label: "label cost", type: "number" },
      { key: "currency", label: "currency", type: "string" },
      { key: "estimated_days", label: "estimated transit days", type: "integer" }
    ]
  }
]
