;;; dap-strata.el --- Strata in dap-mode  -*- lexical-binding: t; -*-

;; Author: Strata
;; Version: 0.1.0
;; Package-Requires: ((emacs "26.1") (dap-mode "0.7"))
;; Keywords: languages, tools, debugging

;; This file is not part of GNU Emacs.

;;; Commentary:

;; Registers the debug adapter of Strata (`strata-dap', over stdio) with
;; dap-mode, and templates for a Python file, a Python file with its C/C++
;; extensions (mixed mode), a native program (C, C++, CUDA), attaching to a
;; running process and connecting to a Python agent started with
;; `python -m strata --listen'.
;;
;;   (add-to-list 'load-path "/path/to/strata/editors/emacs")
;;   (require 'dap-strata)
;;   M-x dap-debug RET "Strata :: Python file" RET
;;
;; `strata-dap-path' names the adapter; by default the `strata-dap' found on
;; `exec-path': /usr/bin/strata-dap from the .deb, PREFIX/bin/strata-dap from
;; `cmake --install', the venv's bin/strata-dap from the wheel.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'dap-mode)

(defgroup dap-strata nil
  "Debug Python, C, C++ and CUDA programs with Strata."
  :group 'dap-mode
  :prefix "dap-strata-")

(defcustom strata-dap-path (executable-find "strata-dap")
  "The strata-dap executable.
nil: the one found on variable `exec-path' when a session starts."
  :group 'dap-strata
  :type '(choice (const :tag "strata-dap on exec-path" nil)
                 (file :must-match t)))

(defcustom dap-strata-python nil
  "The interpreter of Python launches: a path, or a list (PATH FLAGS...).
nil: the adapter's choice, the newest python3.N (N >= 12) on PATH or in
pyenv's versions."
  :group 'dap-strata
  :type '(choice (const :tag "The adapter's choice" nil)
                 (file :tag "Interpreter")
                 (repeat :tag "Interpreter and flags" string)))

(defcustom dap-strata-log-file nil
  "When set, strata-dap writes every message in and out to this file.
This is strata-dap's --log FILE."
  :group 'dap-strata
  :type '(choice (const :tag "No log" nil) file))

(defconst dap-strata--install-hint
  (concat "Install Strata (the .deb puts /usr/bin/strata-dap; "
          "`cmake --install build/release --prefix PREFIX' puts "
          "PREFIX/bin/strata-dap; `pip install strata-*.whl' puts it in the "
          "venv's bin/) or set `strata-dap-path'")
  "How to get strata-dap, said when it cannot be found.")

(defun dap-strata--adapter ()
  "Return the strata-dap to start, or signal how to install one."
  (let ((path (or strata-dap-path (executable-find "strata-dap"))))
    (cond
     ((null path)
      (user-error "Cannot find strata-dap on exec-path.  %s"
                  dap-strata--install-hint))
     ((not (file-executable-p path))
      (user-error "The strata-dap-path %s is not an executable file.  %s"
                  path dap-strata--install-hint))
     (t path))))

(defun dap-strata--server-command ()
  "Return the command line of strata-dap for one session over stdio."
  (append (list (dap-strata--adapter) "--stdio")
          (when dap-strata-log-file
            (list "--log" (expand-file-name dap-strata-log-file)))))

(defun dap-strata--put-default (conf key value)
  "CONF with KEY set to VALUE (a function called for it) unless CONF has KEY."
  (if (plist-member conf key)
      conf
    (plist-put conf key (if (functionp value) (funcall value) value))))

(defun dap-strata--read-token (file)
  "Return the token on the first line of FILE.
This is how strata-dap --token-file and python -m strata read one."
  (let ((path (expand-file-name file)))
    (unless (file-readable-p path)
      (user-error "Cannot read the token file %s" path))
    (let ((token (string-trim
                  (with-temp-buffer
                    (insert-file-contents path)
                    (buffer-substring-no-properties (point-min)
                                                    (line-end-position))))))
      (when (string-empty-p token)
        (user-error "The token file %s holds no token (its first line is empty)"
                    path))
      (when (string-match-p "[[:space:]]" token)
        (user-error "The token file %s: a token has no spaces" path))
      token)))

(defun dap-strata--populate (conf)
  "Complete CONF, a `strata' configuration, for its debug session."
  (let ((conf (copy-sequence conf)))
    (setq conf (plist-put conf :dap-server-path (dap-strata--server-command)))
    (when (equal (plist-get conf :request) "launch")
      ;; A native program comes from a prompt; a Python file is "${file}".
      (unless (or (plist-get conf :program) (plist-get conf :module)
                  (plist-get conf :trace))
        (setq conf (plist-put conf :program
                              (expand-file-name
                               (read-file-name "Program: " nil nil t)))))
      (unless (plist-get conf :trace)
        (setq conf (dap-strata--put-default
                    conf :cwd (expand-file-name default-directory))))
      (when (and dap-strata-python
                 (not (plist-get conf :python))
                 (or (plist-get conf :module)
                     (string-suffix-p ".py" (or (plist-get conf :program) ""))))
        (setq conf (plist-put conf :python dap-strata-python))))
    ;; The token is read now, kept in memory only: `tokenFile' itself never
    ;; reaches the adapter.
    (let ((file (plist-get conf :tokenFile)))
      (when file
        (unless (plist-get conf :token)
          (setq conf (plist-put conf :token (dap-strata--read-token file))))
        (cl-remf conf :tokenFile)))
    (dap-strata--put-default conf :name "Strata")))

;; The adapter's own event (the session's GPU data changed, every 100 ms while
;; a program collects): nothing to do here, and no "No message handler" in the
;; echo area.
(cl-defmethod dap-handle-event ((_event (eql gpuActivity)) _session _params)
  "Ignore the gpuActivity event of strata-dap.")

(dap-register-debug-provider "strata" #'dap-strata--populate)

(dap-register-debug-template
 "Strata :: Python file"
 (list :type "strata"
       :request "launch"
       :program "${file}"
       :name "Strata :: Python file"))

(dap-register-debug-template
 "Strata :: Python file (Python + C/C++)"
 (list :type "strata"
       :request "launch"
       :program "${file}"
       :native t
       :name "Strata :: Python file (Python + C/C++)"))

(dap-register-debug-template
 "Strata :: Native program"
 (list :type "strata"
       :request "launch"
       :args []
       :name "Strata :: Native program"))

(dap-register-debug-template
 "Strata :: Attach to a process"
 (list :type "strata"
       :request "attach"
       :processId "${command:pickProcess}"
       :name "Strata :: Attach to a process"))

(dap-register-debug-template
 "Strata :: Connect to an agent"
 (list :type "strata"
       :request "attach"
       :connect (list :host "127.0.0.1" :port 5678)
       :name "Strata :: Connect to an agent"))

(provide 'dap-strata)
;;; dap-strata.el ends here
