import { createLead } from "./leads";
import { createOrder } from "./orders";
import { recordSignIn } from "./sign-ins";

export const ingestRoutes = [createOrder, createLead, recordSignIn];
