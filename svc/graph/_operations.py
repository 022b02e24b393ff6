"""The platform's operations as the project knows them: one row per method and path.

The rows come from two sources. ``described=True`` rows are the 113 operations of
Meta's OpenAPI description of the WhatsApp Business Platform (v23.0, the last one
published); the others were added to the platform's reference since (or live in
Meta's Business SDK) and are checked against the v26.0 reference. Each row names the
svc helper(s) that send it, or says why there is none: ``RETIRED`` (the platform
withdrew it) or ``NOT_BUILT`` (with the reason). ``RECEIVER`` is the one operation
the platform sends to svc (the webhook). Paths keep the platform's placeholder
names and leave out the version (``/{Phone-Number-ID}/request_code``); a helper is
``Class.method`` of a scoped client, a module function (``svc.media.upload_media``),
or ``Class.prefix_*`` for a family of sends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

__all__ = ["PLATFORM_OPERATIONS", "PlatformOperation"]

OperationStatus = Literal["built", "receiver", "retired", "not built"]
BUILT: Final = "built"
RECEIVER: Final = "receiver"
RETIRED: Final = "retired"
NOT_BUILT: Final = "not built"

MESSAGES: Final = "Messages"
MEDIA: Final = "Media"
PHONE_NUMBERS: Final = "Phone numbers and verification"
PROFILE: Final = "Business profile"
AUTOMATION: Final = "Conversational automation"
HISTORY: Final = "Message history"
GROUPS: Final = "Groups"
CALLING: Final = "Calling"
COMPLIANCE: Final = "Business compliance"
WABA: Final = "WhatsApp Business Account"
SCHEDULES: Final = "Schedules"
TEMPLATES: Final = "Templates"
FLOWS: Final = "Flows"
PORTFOLIO: Final = "Business portfolio and partners"
PREVERIFIED: Final = "Pre-verified numbers"
SOLUTIONS: Final = "Solutions and migration"
MARKETING: Final = "Marketing Messages onboarding"
WEBHOOKS: Final = "Webhooks"

_OBO_ENDED: Final = (
    "the On-Behalf-Of ownership model ended: no onboarding after 2025-09-29 and no "
    "transfer after 2025-10-01; partner-initiated accounts and Multi-Partner Solutions replace it"
)
_SDK_ONLY: Final = "in Meta's Business SDK (v25.0), not in the platform's description; "
_ANALYTICS: Final = _SDK_ONLY + "analytics reports belong to reporting tools"
_TEMPLATE_TOOLING: Final = _SDK_ONLY + "bulk template tooling beyond create_template"
_ADS_SEQUENCES: Final = _SDK_ONLY + "welcome sequences are set up with click-to-WhatsApp ads"


@dataclass(frozen=True, slots=True, kw_only=True)
class PlatformOperation:
    """One operation of the platform and what svc has for it."""

    method: str
    path: str
    name: str
    group: str
    helpers: tuple[str, ...]
    status: OperationStatus
    described: bool
    reason: str

    @property
    def key(self) -> str:
        """``"METHOD /path"``, the row's identity."""
        return f"{self.method} {self.path}"


def _op(
    operation: str,
    name: str,
    group: str,
    *helpers: str,
    described: bool = True,
    status: OperationStatus = BUILT,
    reason: str = "",
) -> PlatformOperation:
    method, path = operation.split(" ", 1)
    return PlatformOperation(
        method=method,
        path=path,
        name=name,
        group=group,
        helpers=helpers,
        status=status,
        described=described,
        reason=reason,
    )


PLATFORM_OPERATIONS: Final[tuple[PlatformOperation, ...]] = (
    # Messages
    _op("POST /{Phone-Number-ID}/marketing_messages", "sendMarketingMessage", MESSAGES,
        "PhoneNumberClient.send_marketing_template"),
    _op("POST /{Phone-Number-ID}/messages", "sendMessage", MESSAGES,
        "PhoneNumberClient.send", "PhoneNumberClient.send_message",
        "PhoneNumberClient.mark_as_read",
        "PhoneNumberClient.send_*"),
    _op("POST /{Phone-Number-ID}/messages_encrypted", "sendEncryptedMessage", MESSAGES,
        "PhoneNumberClient.send_encrypted_message"),
    _op("POST /{Phone-Number-ID}/thread_control", "threadControl", MESSAGES,
        "PhoneNumberClient.pass_thread_control", "PhoneNumberClient.take_thread_control",
        "PhoneNumberClient.release_thread_control", described=False),
    # Media
    _op("POST /{Application-ID}/uploads", "createUploadSession", MEDIA,
        "svc.media.create_upload_session", described=False),
    _op("GET /{Media-ID}", "retrieveMediaUrl", MEDIA, "svc.media.download_media"),
    _op("DELETE /{Media-ID}", "deleteMedia", MEDIA, "svc.media.delete_media"),
    _op("GET /{Media-URL}", "downloadMedia", MEDIA, "svc.media.download_media_bytes"),
    _op("POST /{Phone-Number-ID}/media", "uploadImage", MEDIA, "svc.media.upload_media"),
    _op("GET /{Upload-Session-ID}", "getUploadSession", MEDIA, "svc.media.get_upload_session",
        described=False),
    _op("POST /{Upload-Session-ID}", "uploadFileToSession", MEDIA,
        "svc.media.upload_file_to_session", described=False),
    # Phone numbers and verification
    _op("GET /{Phone-Number-ID}", "getPhoneNumberById", PHONE_NUMBERS,
        "PhoneNumberClient.get_phone_number_info"),
    _op("POST /{Phone-Number-ID}", "updatePhoneNumberStatus", PHONE_NUMBERS,
        "PhoneNumberClient.request_display_name_review"),
    _op("GET /{Phone-Number-ID}/block_users", "getBlockedUsers", PHONE_NUMBERS,
        "PhoneNumberClient.list_blocked_users"),
    _op("POST /{Phone-Number-ID}/block_users", "blockUserS", PHONE_NUMBERS,
        "PhoneNumberClient.block_users"),
    _op("DELETE /{Phone-Number-ID}/block_users", "unblockUserS", PHONE_NUMBERS,
        "PhoneNumberClient.unblock_users"),
    _op("POST /{Phone-Number-ID}/deregister", "deregisterPhoneNumber", PHONE_NUMBERS,
        "PhoneNumberClient.deregister_phone_number"),
    _op("GET /{Phone-Number-ID}/message_qrdls", "listAllQrCodes", PHONE_NUMBERS,
        "PhoneNumberClient.list_qr_codes"),
    _op("POST /{Phone-Number-ID}/message_qrdls", "createOrUpdateQrCode", PHONE_NUMBERS,
        "PhoneNumberClient.create_qr_code", "PhoneNumberClient.update_qr_code"),
    _op("GET /{Phone-Number-ID}/message_qrdls/{QR-Code-ID}", "getIndividualQrCode", PHONE_NUMBERS,
        "PhoneNumberClient.get_qr_code"),
    _op("DELETE /{Phone-Number-ID}/message_qrdls/{QR-Code-ID}", "deleteIndividualQrCode",
        PHONE_NUMBERS, "PhoneNumberClient.delete_qr_code"),
    _op("GET /{Phone-Number-ID}/official_business_account", "getOfficialBusinessAccountStatus",
        PHONE_NUMBERS, "PhoneNumberClient.get_official_business_account"),
    _op("POST /{Phone-Number-ID}/official_business_account",
        "GraphWhatsAppBusinessAccountToNumberCurrentStatusOfficialBusinessAccountPost",
        PHONE_NUMBERS, "PhoneNumberClient.request_official_business_account"),
    _op("POST /{Phone-Number-ID}/register", "registerWhatsAppBusinessPhoneNumber", PHONE_NUMBERS,
        "PhoneNumberClient.register_phone_number"),
    _op("POST /{Phone-Number-ID}/request_code", "requestVerificationCode", PHONE_NUMBERS,
        "PhoneNumberClient.request_code"),
    _op("GET /{Phone-Number-ID}/settings", "getPhoneNumberSettings", PHONE_NUMBERS,
        "PhoneNumberClient.get_settings"),
    _op("POST /{Phone-Number-ID}/settings", "updatePhoneNumberSettings", PHONE_NUMBERS,
        "PhoneNumberClient.update_settings"),
    _op("GET /{Phone-Number-ID}/username", "getBusinessUsername", PHONE_NUMBERS,
        "PhoneNumberClient.get_username", described=False),
    _op("POST /{Phone-Number-ID}/username", "setBusinessUsername", PHONE_NUMBERS,
        "PhoneNumberClient.set_username", described=False),
    _op("DELETE /{Phone-Number-ID}/username", "deleteBusinessUsername", PHONE_NUMBERS,
        "PhoneNumberClient.delete_username", described=False),
    _op("GET /{Phone-Number-ID}/username_suggestions", "getUsernameSuggestions", PHONE_NUMBERS,
        "PhoneNumberClient.list_username_suggestions", described=False),
    _op("POST /{Phone-Number-ID}/verify_code", "verifyPhoneNumberCode", PHONE_NUMBERS,
        "PhoneNumberClient.verify_code"),
    _op("GET /{Phone-Number-ID}/whatsapp_business_encryption", "getBusinessEncryptionPublicKey",
        PHONE_NUMBERS, "PhoneNumberClient.get_business_public_key"),
    _op("POST /{Phone-Number-ID}/whatsapp_business_encryption", "setBusinessEncryptionPublicKey",
        PHONE_NUMBERS, "PhoneNumberClient.set_business_public_key"),
    _op("GET /{WABA-ID}/phone_numbers", "getWhatsAppBusinessAccountPhoneNumbers", PHONE_NUMBERS,
        "WABAClient.list_phone_numbers"),
    _op("POST /{WABA-ID}/phone_numbers", "createWhatsAppBusinessAccountPhoneNumber", PHONE_NUMBERS,
        "WABAClient.add_phone_number"),
    # Business profile
    _op("GET /{Phone-Number-ID}/whatsapp_business_profile", "getWhatsAppBusinessProfile", PROFILE,
        "PhoneNumberClient.get_business_profile"),
    _op("POST /{Phone-Number-ID}/whatsapp_business_profile",
        "updateWhatsAppBusinessProfileInformation", PROFILE,
        "PhoneNumberClient.update_business_profile"),
    _op("GET /{Phone-Number-ID}/whatsapp_commerce_settings", "getCommerceSettings", PROFILE,
        "PhoneNumberClient.get_commerce_settings"),
    _op("POST /{Phone-Number-ID}/whatsapp_commerce_settings", "setOrUpdateCommerceSettings",
        PROFILE, "PhoneNumberClient.update_commerce_settings"),
    _op("GET /{WhatsApp-Business-Profile-ID}", "getWhatsAppBusinessProfileDetails", PROFILE,
        "PhoneNumberClient.get_business_profile_node"),
    _op("POST /{WhatsApp-Business-Profile-ID}", "updateWhatsAppBusinessProfile", PROFILE,
        "PhoneNumberClient.update_business_profile_node"),
    # Conversational automation
    _op("POST /{Phone-Number-ID}/conversational_automation", "configureConversationalAutomation",
        AUTOMATION, "PhoneNumberClient.configure_conversational_automation"),
    _op("GET /{WABA-Bot-ID}", "getWhatsAppBusinessBotDetails", AUTOMATION,
        "PhoneNumberClient.get_business_bot"),
    _op("GET /{WABA-ID}/welcome_message_sequences", "getWelcomeMessageSequences", AUTOMATION,
        described=False, status=NOT_BUILT, reason=_ADS_SEQUENCES),
    _op("POST /{WABA-ID}/welcome_message_sequences", "createWelcomeMessageSequence", AUTOMATION,
        described=False, status=NOT_BUILT, reason=_ADS_SEQUENCES),
    _op("DELETE /{WABA-ID}/welcome_message_sequences", "deleteWelcomeMessageSequences", AUTOMATION,
        described=False, status=NOT_BUILT, reason=_ADS_SEQUENCES),
    # Message history
    _op("GET /{Message-History-ID}/events", "getMessageHistoryEvents", HISTORY,
        "PhoneNumberClient.list_message_history_events"),
    _op("GET /{Phone-Number-ID}/message_history", "getMessageHistory", HISTORY,
        "PhoneNumberClient.list_message_history"),
    # Groups
    _op("GET /{Phone-Number-ID}/groups", "getActiveGroups", GROUPS,
        "PhoneNumberClient.list_groups"),
    _op("POST /{Phone-Number-ID}/groups", "createGroup", GROUPS, "PhoneNumberClient.create_group"),
    _op("GET /{group_id}", "getGroupInfo", GROUPS, "GroupClient.get_group"),
    _op("POST /{group_id}", "updateGroupSettings", GROUPS, "GroupClient.update_group"),
    _op("DELETE /{group_id}", "deleteGroup", GROUPS, "GroupClient.delete_group"),
    _op("GET /{group_id}/invite_link", "getGroupInviteLink", GROUPS, "GroupClient.get_invite_link",
        described=False),
    _op("POST /{group_id}/invite_link", "createGroupInviteLink", GROUPS,
        "GroupClient.reset_invite_link"),
    _op("DELETE /{group_id}/invite_link", "deleteGroupInviteLink", GROUPS,
        "GroupClient.revoke_invite_link"),
    _op("GET /{group_id}/join_requests", "getJoinRequests", GROUPS,
        "GroupClient.list_join_requests"),
    _op("POST /{group_id}/join_requests", "approveJoinRequests", GROUPS,
        "GroupClient.approve_join_requests"),
    _op("DELETE /{group_id}/join_requests", "rejectJoinRequests", GROUPS,
        "GroupClient.reject_join_requests"),
    _op("POST /{group_id}/participants", "addGroupParticipants", GROUPS,
        "GroupClient.add_participants"),
    _op("DELETE /{group_id}/participants", "removeGroupParticipants", GROUPS,
        "GroupClient.remove_participants"),
    # Calling
    _op("GET /{Phone-Number-ID}/call_permissions", "checkCallPermissions", CALLING,
        "PhoneNumberClient.get_call_permissions"),
    _op("POST /{Phone-Number-ID}/calls", "manageCalls", CALLING, "PhoneNumberClient.connect_call",
        "PhoneNumberClient.pre_accept_call", "PhoneNumberClient.accept_call",
        "PhoneNumberClient.reject_call", "PhoneNumberClient.terminate_call"),
    # Business compliance
    _op("GET /{Phone-Number-ID}/business_compliance_info", "getBusinessComplianceInfo", COMPLIANCE,
        "PhoneNumberClient.get_compliance_info"),
    _op("POST /{Phone-Number-ID}/business_compliance_info", "updateBusinessComplianceInfo",
        COMPLIANCE, "PhoneNumberClient.update_compliance_info"),
    # WhatsApp Business Account
    _op("GET /{WABA-ID}", "getWhatsAppBusinessAccountDetails", WABA, "WABAClient.get_waba_info"),
    _op("POST /{WABA-ID}", "updateWhatsAppBusinessAccount", WABA, "WABAClient.update_waba"),
    _op("GET /{WABA-ID}/activities", "getWhatsAppBusinessAccountActivities", WABA,
        "WABAClient.list_activities"),
    _op("GET /{WABA-ID}/call_analytics", "getCallAnalytics", WABA, described=False,
        status=NOT_BUILT, reason=_ANALYTICS),
    _op("GET /{WABA-ID}/conversation_analytics", "getConversationAnalytics", WABA, described=False,
        status=NOT_BUILT, reason=_ANALYTICS),
    _op("GET /{WABA-ID}/pricing_analytics", "getPricingAnalytics", WABA, described=False,
        status=NOT_BUILT, reason=_ANALYTICS),
    _op("GET /{WABA-ID}/subscribed_apps", "getAllSubscriptionsForAWaba", WABA,
        "WABAClient.list_subscribed_apps"),
    _op("POST /{WABA-ID}/subscribed_apps", "subscribeToWabaWebhooks", WABA,
        "WABAClient.subscribe_app"),
    _op("DELETE /{WABA-ID}/subscribed_apps", "unsubscribeFromWabaWebhooks", WABA,
        "WABAClient.unsubscribe_app"),
    _op("GET /{WABA-ID}/template_analytics", "getTemplateAnalytics", WABA, described=False,
        status=NOT_BUILT, reason=_ANALYTICS),
    _op("GET /{WhatsApp-Account-Number-ID}", "getWhatsAppAccountNumberDetails", WABA,
        "WABAClient.get_account_number"),
    _op("GET /{WhatsApp-Business-Account-ID}/assigned_users", "getAssignedUsers", WABA,
        "WABAClient.list_assigned_users"),
    _op("POST /{WhatsApp-Business-Account-ID}/assigned_users", "addAssignedUser", WABA,
        "WABAClient.add_assigned_user"),
    _op("DELETE /{WhatsApp-Business-Account-ID}/assigned_users", "removeAssignedUser", WABA,
        "WABAClient.remove_assigned_user"),
    # Schedules
    _op("GET /{WABA-ID}/schedules", "getWhatsAppBusinessAccountSchedules", SCHEDULES,
        "WABAClient.list_schedules"),
    _op("POST /{WABA-ID}/schedules", "createWhatsAppBusinessAccountSchedule", SCHEDULES,
        "WABAClient.create_schedule"),
    # Templates
    _op("GET /{TEMPLATE_ID}", "getTemplateByIdDefaultFields", TEMPLATES, "WABAClient.get_template"),
    _op("POST /{TEMPLATE_ID}", "editTemplate", TEMPLATES, "WABAClient.update_template"),
    _op("GET /{Template-Group-ID}", "getTemplateGroup", TEMPLATES, "WABAClient.get_template_group",
        described=False),
    _op("POST /{Template-Group-ID}", "updateTemplateGroup", TEMPLATES,
        "WABAClient.update_template_group", described=False),
    _op("DELETE /{Template-Group-ID}", "deleteTemplateGroup", TEMPLATES,
        "WABAClient.delete_template_group", described=False),
    _op("GET /{WABA-ID}/message_template_previews", "getMessageTemplatePreviews", TEMPLATES,
        described=False, status=NOT_BUILT, reason=_TEMPLATE_TOOLING),
    _op("GET /{WABA-ID}/message_templates", "getTemplateByNameDefaultFields", TEMPLATES,
        "WABAClient.list_templates"),
    _op("POST /{WABA-ID}/message_templates", "createAuthenticationTemplateWOtpCopyCodeButton",
        TEMPLATES, "WABAClient.create_template"),
    _op("DELETE /{WABA-ID}/message_templates", "deleteTemplateByName", TEMPLATES,
        "WABAClient.delete_template"),
    _op("POST /{WABA-ID}/migrate_message_templates", "migrateMessageTemplates", TEMPLATES,
        described=False, status=NOT_BUILT, reason=_TEMPLATE_TOOLING),
    _op("GET /{WABA-ID}/template_group_analytics", "getTemplateGroupAnalytics", TEMPLATES,
        "WABAClient.get_template_group_analytics", described=False),
    _op("GET /{WABA-ID}/template_groups", "listTemplateGroups", TEMPLATES,
        "WABAClient.list_template_groups", described=False),
    _op("POST /{WABA-ID}/template_groups", "createTemplateGroup", TEMPLATES,
        "WABAClient.create_template_group", described=False),
    _op("POST /{WABA-ID}/upsert_message_templates", "upsertMessageTemplates", TEMPLATES,
        described=False, status=NOT_BUILT, reason=_TEMPLATE_TOOLING),
    # Flows
    _op("GET /{Flow-ID}", "getFlow", FLOWS, "WABAClient.get_flow"),
    _op("POST /{Flow-ID}", "updateFlowMetadata", FLOWS, "WABAClient.update_flow"),
    _op("DELETE /{Flow-ID}", "deleteFlow", FLOWS, "WABAClient.delete_flow"),
    _op("GET /{Flow-ID}/assets", "listAssetsGetFlowJsonUrl", FLOWS, "WABAClient.list_flow_assets"),
    _op("POST /{Flow-ID}/assets", "updateFlowJson", FLOWS, "WABAClient.update_flow_json"),
    _op("POST /{Flow-ID}/deprecate", "deprecateFlow", FLOWS, "WABAClient.deprecate_flow"),
    _op("POST /{Flow-ID}/publish", "publishFlow", FLOWS, "WABAClient.publish_flow"),
    _op("GET /{WABA-ID}/flows", "listFlows", FLOWS, "WABAClient.list_flows"),
    _op("POST /{WABA-ID}/flows", "createFlow", FLOWS, "WABAClient.create_flow"),
    _op("POST /{WABA-ID}/migrate_flows", "migrateFlows", FLOWS, "WABAClient.migrate_flows"),
    # Business portfolio and partners
    _op("GET /{Business-ID}", "getBusinessPortfolioSpecificFields", PORTFOLIO,
        "BusinessClient.get_business"),
    _op("GET /{Business-ID}/client_whatsapp_business_accounts", "getClientWhatsAppBusinessAccounts",
        PORTFOLIO, "BusinessClient.list_client_wabas"),
    _op("GET /{Business-ID}/extendedcredits", "getCreditLines", PORTFOLIO,
        "BusinessClient.list_credit_lines"),
    _op("GET /{Business-ID}/owned_whatsapp_business_accounts", "getOwnedWhatsAppBusinessAccounts",
        PORTFOLIO, "BusinessClient.list_owned_wabas"),
    _op("GET /{User-ID}/assigned_whatsapp_business_accounts", "getAssignedWhatsAppBusinessAccounts",
        PORTFOLIO, "BusinessClient.list_user_assigned_wabas"),
    # Pre-verified numbers
    _op("POST /{Business-ID}/add_phone_numbers", "addPhoneNumbers", PREVERIFIED,
        "BusinessClient.add_preverified_number"),
    _op("GET /{Business-ID}/preverified_numbers", "getPreVerifiedPhoneNumbers", PREVERIFIED,
        "BusinessClient.list_preverified_numbers"),
    _op("POST /{Business-ID}/share_preverified_numbers", "sharePreVerifiedPhoneNumber", PREVERIFIED,
        "BusinessClient.share_preverified_number"),
    _op("DELETE /{Business-ID}/share_preverified_numbers", "unsharePreVerifiedPhoneNumber",
        PREVERIFIED, "BusinessClient.unshare_preverified_number", described=False),
    _op("GET /{Pre-Verified-Phone-Number-ID}", "getPreVerifiedPhoneNumberDetails", PREVERIFIED,
        "BusinessClient.get_preverified_number"),
    _op("DELETE /{Pre-Verified-Phone-Number-ID}", "deletePreVerifiedPhoneNumber", PREVERIFIED,
        "BusinessClient.delete_preverified_number"),
    _op("GET /{Pre-Verified-Phone-Number-ID}/partners", "getPreVerifiedPhoneNumberPartners",
        PREVERIFIED, "BusinessClient.list_preverified_number_partners"),
    _op("POST /{Pre-Verified-Phone-Number-ID}/request_code", "requestPreVerifiedPhoneNumberCode",
        PREVERIFIED, "BusinessClient.request_preverified_code"),
    _op("POST /{Pre-Verified-Phone-Number-ID}/verify_code", "verifyPreVerifiedPhoneNumberCode",
        PREVERIFIED, "BusinessClient.verify_preverified_code"),
    # Solutions and migration
    _op("GET /{Application-ID}/connected_client_businesses", "getConnectedClientBusinesses",
        SOLUTIONS, "AppClient.list_connected_client_businesses"),
    _op("POST /{Application-ID}/whatsapp_business_solution", "createWhatsAppBusinessSolution",
        SOLUTIONS, "AppClient.create_solution"),
    _op("GET /{Application-ID}/whatsapp_business_solutions",
        "getApplicationWhatsAppBusinessSolutions", SOLUTIONS, "AppClient.list_solutions"),
    _op("GET /{Migration-Intent-ID}", "getMigrationIntentDetails", SOLUTIONS,
        "WABAClient.get_migration_intent"),
    _op("GET /{OBO-Mobility-Intent-ID}", "getOBOMobilityIntent", SOLUTIONS, status=RETIRED,
        reason=_OBO_ENDED),
    _op("GET /{Solution-ID}", "getSolutionDetails", SOLUTIONS, "SolutionClient.get_solution"),
    _op("POST /{Solution-ID}/accept", "acceptWhatsAppBusinessSolution", SOLUTIONS,
        "SolutionClient.accept_invitation"),
    _op("POST /{Solution-ID}/accept_deactivation_request",
        "acceptWhatsAppBusinessSolutionDeactivationRequest", SOLUTIONS,
        "SolutionClient.accept_deactivation_request"),
    _op("GET /{Solution-ID}/access_token", "getSolutionAccessToken", SOLUTIONS,
        "SolutionClient.get_access_token"),
    _op("POST /{Solution-ID}/reject", "rejectSolutionRequest", SOLUTIONS,
        "SolutionClient.reject_request"),
    _op("POST /{Solution-ID}/reject_deactivation_request", "rejectSolutionDeactivationRequest",
        SOLUTIONS, "SolutionClient.reject_deactivation_request"),
    _op("POST /{Solution-ID}/send_deactivation_request", "sendSolutionDeactivationRequest",
        SOLUTIONS, "SolutionClient.send_deactivation_request"),
    _op("GET /{WABA-ID}/in_progress_onbehalf_request", "getInProgressOnBehalfRequests", SOLUTIONS,
        status=RETIRED, reason=_OBO_ENDED),
    _op("POST /{WABA-ID}/obo_mobility_intent", "createOBOMobilityIntent", SOLUTIONS, status=RETIRED,
        reason=_OBO_ENDED),
    _op("POST /{WABA-ID}/set_obo_mobility_intent", "setOBOMobilityIntent", SOLUTIONS,
        status=RETIRED, reason=_OBO_ENDED),
    _op("POST /{WABA-ID}/set_solution_migration_intent", "setSolutionMigrationIntent", SOLUTIONS,
        "WABAClient.set_solution_migration_intent"),
    _op("GET /{WABA-ID}/solutions", "listWabaSolutions", SOLUTIONS, "WABAClient.list_solutions"),
    # Marketing Messages onboarding
    _op("POST /{Business-ID}/onboard_partners_to_mm_lite", "onboardPartnersToMMLite", MARKETING,
        "BusinessClient.onboard_to_marketing_messages"),
    # Webhooks
    _op("POST /whatsapp/webhooks", "receiveWebhooks", WEBHOOKS, "svc.webhook.receive_delivery",
        status=RECEIVER),
)
"""Every operation of the platform, grouped as the platform groups them."""
