"""The draft shares the target's embedding and head: no rank lacks them here."""


class SharingProposer:
    def attach(self, target):
        self.draft.model.embed_tokens = target.model.embed_tokens
        self.draft.lm_head = target.lm_head

    def attach_by_setter(self, target):
        self.draft.set_input_embeddings(target.get_input_embeddings())
